package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.config.Durations;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.LakeArchivedRowsTable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code lake.retention}: deletes raw hours older than the setting, oldest first, and records how far it went.
 *
 * <p>An hour is deleted only when it has ended {@code lake.retention} ago (by the clock), lies below the lake's
 * completeness boundary, is covered by succeeded {@code range}/{@code nightly} backfills (the rule the reconciler
 * uses before it reconciles a range: once covered, the batch result is in PostgreSQL and nothing downstream needs
 * the raw hour), and holds no hidden file (a stream job may be writing a late event into it). Deletion stops at
 * the first hour that fails a test, so what is deleted is always everything below one instant.
 *
 * <p>That instant, the <em>retention horizon</em>, is written before any hour below it is deleted, as a file
 * {@code <lake>/_recount/retention/retained-from-<epoch ms>} (several may exist for a moment; the largest counts).
 * The batch layer refuses to recompute anything before it ({@link #requireRetained}): the lake there is gone or
 * going, and a recompute would replace good results with nothing. A late event for such a window is settled
 * without a recompute by {@code affected} (it was older than validation.max-past + 1d when it arrived, which the
 * retention setting's lower bound makes the rare case of a stream job far behind).
 */
final class LakeRetention {
    private static final Logger LOG = LoggerFactory.getLogger(LakeRetention.class);
    static final String DIRECTORY = "retention";
    static final String PREFIX = "retained-from-";

    /** What a retention pass did; {@code horizon} is null when nothing was ever deleted. */
    record Outcome(boolean enabled, int hoursDeleted, long filesDeleted, Long horizon, String stoppedAt) {
        static Outcome off() {
            return new Outcome(false, 0, 0, null, null);
        }

        String summary() {
            if (!enabled) return "retention: keep forever";
            StringBuilder s =
                    new StringBuilder("retention: " + hoursDeleted + " hours deleted (" + filesDeleted + " files)");
            if (horizon != null) s.append(", lake kept from ").append(Instant.ofEpochMilli(horizon));
            if (stoppedAt != null) s.append("; stopped at ").append(stoppedAt);
            return s.toString();
        }

        ObjectNode json() {
            ObjectNode json = JsonOutput.object();
            json.put("enabled", enabled);
            json.put("hours_deleted", hoursDeleted);
            json.put("files_deleted", filesDeleted);
            if (horizon != null)
                json.put("kept_from", Instant.ofEpochMilli(horizon).toString());
            if (stoppedAt != null) json.put("stopped_at", stoppedAt);
            return json;
        }
    }

    private LakeRetention() {}

    /** The retention horizon: the lake holds no event before it any more. Empty when retention never deleted. */
    static Optional<Long> horizon(LakeStorage lake) throws IOException {
        Optional<Long> max = Optional.empty();
        for (FileStatus s : lake.listOrEmpty(lake.controlDirectory(DIRECTORY))) {
            String name = s.getPath().getName();
            if (!name.startsWith(PREFIX)) continue;
            try {
                long at = Long.parseLong(name.substring(PREFIX.length()));
                if (max.isEmpty() || at > max.get()) max = Optional.of(at);
            } catch (NumberFormatException e) {
                // not ours
            }
        }
        return max;
    }

    /** Refuses a recompute of anything before the retention horizon: exit 3, the results stand. */
    static void requireRetained(LakeStorage lake, List<TimeRange> ranges) throws IOException {
        Optional<Long> horizon = horizon(lake);
        if (horizon.isEmpty()) return;
        for (TimeRange r : ranges) {
            if (r.fromMillis() < horizon.get()) {
                throw BackfillException.refusedByBoundary("the lake no longer holds events before "
                        + Instant.ofEpochMilli(horizon.get()) + " (deleted by lake.retention); recomputing " + r
                        + " would replace its results with partial ones, so they stand as they are");
            }
        }
    }

    /**
     * Deletes what {@code retention} allows, oldest hour first, each day under the batch layer's advisory lock for
     * that day (no backfill reads it meanwhile).
     *
     * @param until the lake's completeness boundary
     */
    static Outcome apply(
            Connection conn, LakeStorage lake, BackfillSettings settings, Duration retention, long until, Clock clock)
            throws SQLException, IOException {
        long cutoff = LakeLayout.hourStart(clock.millis() - retention.toMillis());
        long limit = Math.min(cutoff, until);
        Map<String, List<long[]>> covered = new LinkedHashMap<>();
        for (MetricSet set : settings.sets().sets()) {
            covered.put(set.name(), BatchRunsTable.coveredRanges(conn, limit, set.name()));
        }
        int hours = 0;
        long files = 0;
        String stoppedAt = null;
        days:
        for (LocalDate date : lake.dates()) {
            if (date.atStartOfDay(java.time.ZoneOffset.UTC).toInstant().toEpochMilli() >= limit) break;
            List<LakeHour> candidates = lake.hours(date);
            if (candidates.isEmpty() || candidates.get(0).endMillis() > limit) break;
            try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout())) {
                locks.lockRange(LakeCompactor.lockRange(date, settings.sets()), settings.shortestWindow());
                CompactionJournal.finishInterrupted(lake, date);
                for (LakeHour h : candidates) {
                    if (h.endMillis() > limit) break days;
                    String uncovered = uncoveredSet(covered, h);
                    if (uncovered != null) {
                        stoppedAt = h + ": no succeeded range or nightly backfill covers it yet"
                                + (covered.size() > 1 ? " for metric set " + uncovered : "");
                        break days;
                    }
                    List<FileStatus> hidden = lake.hiddenFiles(h);
                    if (!hidden.isEmpty()) {
                        stoppedAt = h + ": it holds " + hidden.get(0).getPath().getName() + " (a stream job's file"
                                + " in progress; if no job writes it any more, delete it)";
                        break days;
                    }
                    markHorizon(lake, h.endMillis());
                    for (FileStatus f : lake.dataFiles(h)) {
                        lake.fs().delete(f.getPath(), false);
                        files++;
                    }
                    lake.removeIfEmpty(h);
                    hours++;
                }
                lake.fs().delete(new Path(lake.controlDirectory(LakeCompactor.STAGING), date.toString()), true);
                // No compaction visits the date again to drop what a killed one left undecided.
                CompactionJournal.dropUndecided(lake, date);
            }
        }
        if (stoppedAt != null) {
            LOG.warn("retention ({}) stopped at {}", Durations.format(retention), stoppedAt);
        }
        // What the stream archived into the deleted hours: nothing reads those hours any more (they are before the
        // horizon, which every backfill refuses), so their counts go with them.
        Optional<Long> horizon = horizon(lake);
        if (horizon.isPresent()) LakeArchivedRowsTable.forgetBefore(conn, horizon.get());
        LOG.info(
                "retention ({}): {} hours deleted ({} files) below {}",
                Durations.format(retention),
                hours,
                files,
                Instant.ofEpochMilli(limit));
        return new Outcome(true, hours, files, horizon.orElse(null), stoppedAt);
    }

    /** Moves the horizon up to {@code millis} (never down): the new marker first, then the older ones go. */
    static void markHorizon(LakeStorage lake, long millis) throws IOException {
        Optional<Long> current = horizon(lake);
        if (current.isPresent() && current.get() >= millis) return;
        Path dir = lake.controlDirectory(DIRECTORY);
        lake.writeAtomically(
                new Path(dir, PREFIX + millis), (Instant.ofEpochMilli(millis) + "\n").getBytes(StandardCharsets.UTF_8));
        List<Path> older = new ArrayList<>();
        for (FileStatus s : lake.listOrEmpty(dir)) {
            String name = s.getPath().getName();
            if (name.startsWith(PREFIX) && !name.equals(PREFIX + millis)) older.add(s.getPath());
        }
        for (Path p : older) lake.fs().delete(p, false);
    }

    /**
     * The first metric set none of whose succeeded range or nightly runs covers {@code h}, or null when every set's
     * do: a set whose history is not computed yet still needs the raw hour.
     */
    static String uncoveredSet(Map<String, List<long[]>> coveredPerSet, LakeHour h) {
        for (Map.Entry<String, List<long[]>> e : coveredPerSet.entrySet()) {
            if (!isCovered(e.getValue(), h)) return e.getKey();
        }
        return null;
    }

    static boolean isCovered(List<long[]> covered, LakeHour h) {
        for (long[] r : covered) {
            if (r[0] <= h.startMillis() && h.endMillis() <= r[1]) return true;
        }
        return false;
    }
}
