package dev.recount.batch;

import dev.recount.core.config.AttributionSettings;
import dev.recount.core.config.Component;
import dev.recount.core.config.Durations;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Optional;

/**
 * The settings the batch layer reads from {@link RecountConfig} (see config/recount.properties). No secrets.
 *
 * @param postgres the batch layer's own login ({@code postgres.batch.user}) and schema
 * @param lakeRetention             how long raw hours are kept (null: forever)
 * @param compactionTargetFileBytes the size compaction aims at per file
 * @param maxPast                   validation.max-past: how old a valid event may be when it arrives
 * @param attribution               attribution.*: the rule; range and nightly runs recompute attribution for every
 *                                  set whose definition has it on (attribution.enabled is its default)
 * @param sets                      the metric sets (metric-sets.file): what every run computes, unless told one set
 * @param lakeCheckWait             how long a lake hour holding fewer rows than archived into it is re-checked
 */
public record BackfillSettings(
        String lakePath,
        String sparkMaster,
        Duration lockTimeout,
        String affectedGroup,
        String backfillTopic,
        String bootstrapServers,
        ZoneId timeZone,
        MetricSets sets,
        PostgresSettings postgres,
        Duration lakeRetention,
        long compactionTargetFileBytes,
        Duration maxPast,
        AttributionSettings attribution,
        Duration lakeCheckWait) {

    /** The least compaction target: smaller files would defeat the point (and Parquet pages are ~1 MB). */
    static final long MIN_TARGET_FILE_BYTES = 1L << 20;

    public BackfillSettings {
        if (lakePath == null || lakePath.isBlank()) throw new IllegalArgumentException("lake.path must not be empty");
        if (affectedGroup == null || affectedGroup.isBlank()) {
            throw new IllegalArgumentException("batch.affected-group must not be empty");
        }
        if (backfillTopic == null || backfillTopic.isBlank()) {
            throw new IllegalArgumentException("topics.backfill must not be empty");
        }
        if (compactionTargetFileBytes < MIN_TARGET_FILE_BYTES) {
            throw new IllegalArgumentException("lake.compaction.target-file-size must be at least 1m, got "
                    + compactionTargetFileBytes + " bytes");
        }
        if (maxPast == null) throw new IllegalArgumentException("maxPast must not be null");
        if (sets == null) throw new IllegalArgumentException("sets must not be null");
        if (attribution == null) throw new IllegalArgumentException("attribution must not be null");
        if (lakeCheckWait == null || lakeCheckWait.isNegative()) {
            throw new IllegalArgumentException("batch.lake-check-wait must not be negative");
        }
        if (lakeRetention != null) {
            // An hour may still receive valid late events until validation.max-past has passed; the day on top
            // covers a stream job that lags behind. Deleting earlier would make `affected` recompute a window
            // from its late events alone.
            Duration least = maxPast.plusDays(1);
            String rule = "it must be at least validation.max-past + 1d";
            String why = "late events may still arrive for younger hours";
            if (sets.sets().stream().anyMatch(MetricSet::attribution)) {
                // Attribution joins an hour's clicks with impressions up to attribution.window before them, so
                // recomputing a late hour reads that much further back; deleted, the run is refused (exit 3), for
                // good, and retention stops at the first day no backfill covers.
                least = least.plus(attribution.window());
                rule = "with attribution on it must be at least validation.max-past + attribution.window + 1d";
                why = "recomputing a late hour reads attribution.window further back";
            }
            if (lakeRetention.compareTo(least) < 0) {
                throw new IllegalArgumentException("lake.retention " + Durations.format(lakeRetention)
                        + " is too short: " + rule + " = " + Durations.format(least) + " (" + why + ")");
            }
        }
    }

    public static BackfillSettings from(RecountConfig config) {
        String retention = config.get("lake.retention");
        return new BackfillSettings(
                config.get("lake.path"),
                config.get("batch.spark-master"),
                config.duration("batch.lock-timeout"),
                config.get("batch.affected-group"),
                config.topics().backfill(),
                config.get("kafka.bootstrap-servers"),
                config.timeZone(),
                MetricSets.fromConfig(config),
                config.postgres(Component.BATCH),
                retention.isBlank() ? null : config.duration("lake.retention"),
                DataSizes.parse("lake.compaction.target-file-size", config.get("lake.compaction.target-file-size")),
                config.eventTime().maxPast(),
                config.attribution(),
                config.duration("batch.lake-check-wait"));
    }

    /**
     * The sets a run computes: every declared one, or with {@code only} (a command's {@code --set NAME}) that one.
     *
     * @throws dev.recount.core.config.ConfigException naming the declared sets when none is called {@code only}
     */
    public MetricSets selected(String only) {
        return only == null ? sets : sets.only(only);
    }

    /**
     * The shortest window of any declared set: every window of any set that may hold an event lies within one of
     * these from the event, so lock ranges computed with it cover every set's.
     */
    public WindowAlignment shortestWindow() {
        return sets.sets().stream()
                .map(MetricSet::windows)
                .min(java.util.Comparator.comparingLong(WindowAlignment::sizeMillis))
                .orElseThrow(() -> new IllegalStateException("no metric set is declared"));
    }

    /** How long raw hours are kept; empty: forever. */
    public Optional<Duration> retention() {
        return Optional.ofNullable(lakeRetention);
    }
}
