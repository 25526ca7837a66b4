package dev.recount.batch;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Spark part of a run, for every set it computes: the window rows recomputed from lake rows ({@link
 * WindowAggregation}), counted and loaded into each set's staging table, and the attribution rows of the sets that
 * have it. Nothing is replaced here: {@link RunLifecycle#commit} does that for all sets at once.
 */
final class SetRecompute {
    private static final Logger LOG = LoggerFactory.getLogger(SetRecompute.class);

    private SetRecompute() {}

    /**
     * What one set's recompute gave: its stored rows (keys with events), their events, the lake rows and the events
     * left out (an attribute it reads invalid) of every key, how its rows were staged, and the lake rows per hour of
     * the window starts.
     */
    record SetComputed(
            MetricSet set,
            long rows,
            long events,
            long lakeRows,
            long leftOut,
            StagingWriter.Path path,
            Map<Long, Long> lakeRowsOfHour) {}

    /** The outcome of the Spark part of a run, per set in the run's order, before the replace. */
    record Computed(Map<String, SetComputed> sets, long computeMillis, long stageMillis) {
        static Computed empty() {
            return new Computed(Map.of(), 0, 0);
        }

        SetComputed of(MetricSet set) {
            return sets.get(set.name());
        }

        /**
         * The events (each once) of the rows every set read: a set's counted events plus those it left out. Only
         * meaningful where every set read the same rows (a range run); {@code affected} adds per set instead.
         */
        long distinctEvents() {
            return sets.values().stream()
                    .findFirst()
                    .map(s -> s.events() + s.leftOut())
                    .orElse(0L);
        }

        /** The lake rows (copies included) of the rows every set read; as {@link #distinctEvents}. */
        long lakeRows() {
            return sets.values().stream().findFirst().map(SetComputed::lakeRows).orElse(0L);
        }

        /** The events counted over all sets: each set's events added (an event counts once per set). */
        long eventsOverSets() {
            return sets.values().stream().mapToLong(SetComputed::events).sum();
        }

        /**
         * The lake rows of each whole hour of {@code range}, from a set's rows per hour; empty when no set's windows
         * nest in hours (then an hour's folder is not its windows' events).
         */
        Map<Long, Long> lakeRowsByWholeHour(TimeRange range) {
            for (SetComputed s : sets.values()) {
                if (LakeLayout.HOUR_MILLIS % s.set().window().toMillis() != 0) continue;
                Map<Long, Long> whole = new TreeMap<>();
                long first = LakeLayout.hourStart(range.fromMillis() + LakeLayout.HOUR_MILLIS - 1);
                for (long h = first; h + LakeLayout.HOUR_MILLIS <= range.toMillis(); h += LakeLayout.HOUR_MILLIS) {
                    whole.put(h, s.lakeRowsOfHour().getOrDefault(h, 0L));
                }
                return whole;
            }
            return Map.of();
        }

        /** Run-level facts for {@code batch_runs.details}, each set's under {@code sets.<name>}. */
        ObjectNode details(long events) {
            ObjectNode d = RunOutput.JSON.createObjectNode();
            d.put("lake_rows", lakeRows());
            d.put("duplicates_dropped", lakeRows() - events);
            d.put("compute_ms", computeMillis);
            d.put("stage_ms", stageMillis);
            for (SetComputed s : sets.values()) {
                ObjectNode n = RunOutput.setDetails(d, s.set().name());
                n.put("window_rows", s.rows());
                n.put("events", s.events());
                n.put("lake_rows", s.lakeRows());
                n.put(RunOutput.LEFT_OUT, s.leftOut());
                n.put("staged_from", s.path().name().toLowerCase(java.util.Locale.ROOT));
            }
            return d;
        }
    }

    /**
     * Recomputes the window rows of {@code scopes} from {@code lakeRows} and stages each set's; one Spark plan for
     * all of them ({@link WindowAggregation#recompute}).
     */
    static Computed stage(
            RunContext run, Connection conn, long runId, Dataset<Row> lakeRows, List<WindowAggregation.SetScope> scopes)
            throws SQLException {
        long computeNanos = 0;
        long stageNanos = 0;
        Map<String, SetComputed> out = new LinkedHashMap<>();
        try (WindowAggregation.Recomputed recomputed = WindowAggregation.recompute(
                lakeRows, scopes, run.settings().sets().attributes())) {
            for (WindowAggregation.SetScope scope : scopes) {
                MetricSet set = scope.set();
                long t0 = System.nanoTime();
                LOG.info("run {}: aggregating metric set {}", runId, set.name());
                Totals totals = Totals.of(recomputed.rows(set));
                long t1 = System.nanoTime();
                LOG.info(
                        "run {}: metric set {}: {} events ({} lake rows, {} left out) in {} window rows; staging them",
                        runId,
                        set.name(),
                        totals.events,
                        totals.lakeRows,
                        totals.leftOut,
                        totals.rows);
                StagingWriter.Path path = run.staging()
                        .write(StagingWriter.Target.windows(set), recomputed.stored(set), totals.rows, runId, conn);
                long t2 = System.nanoTime();
                computeNanos += t1 - t0;
                stageNanos += t2 - t1;
                out.put(
                        set.name(),
                        new SetComputed(
                                set,
                                totals.rows,
                                totals.events,
                                totals.lakeRows,
                                totals.leftOut,
                                path,
                                totals.lakeRowsOfHour));
            }
        }
        return new Computed(out, computeNanos / 1_000_000, stageNanos / 1_000_000);
    }

    /** One set's totals, per lake hour of the window starts: one pass over its rows (cached), which staging reuses. */
    private record Totals(long rows, long events, long lakeRows, long leftOut, Map<Long, Long> lakeRowsOfHour) {
        static Totals of(Dataset<Row> rows) {
            Column start = col(WindowAggregation.WINDOW_START);
            Column events = col(Measure.EVENTS);
            List<Row> perHour = rows.groupBy(start.minus(pmod(start, lit(LakeLayout.HOUR_MILLIS)))
                            .as("hour"))
                    .agg(
                            sum(when(events.gt(0), 1L).otherwise(0L)),
                            coalesce(sum(events), lit(0L)),
                            coalesce(sum(col(WindowAggregation.LAKE_ROWS)), lit(0L)),
                            coalesce(sum(col(WindowAggregation.LEFT_OUT)), lit(0L)))
                    .collectAsList();
            long keys = 0;
            long counted = 0;
            long lake = 0;
            long left = 0;
            Map<Long, Long> ofHour = new TreeMap<>();
            for (Row h : perHour) {
                keys += h.getLong(1);
                counted += h.getLong(2);
                lake += h.getLong(3);
                left += h.getLong(4);
                ofHour.put(h.getLong(0), h.getLong(3));
            }
            return new Totals(keys, counted, lake, left, ofHour);
        }
    }

    /**
     * Recomputes attribution for {@code range} from the lake (read from one attribution window before it) for every
     * set of {@code sets} and loads it into their staging tables for {@code runId}; returns how many rows per set.
     * The clicks are judged once for all sets ({@link AttributionAggregation#judged}).
     */
    static Map<String, Long> stageAttribution(
            RunContext run, Connection conn, long runId, TimeRange range, AttributionRule rule, List<MetricSet> sets)
            throws SQLException {
        Map<String, Long> staged = new LinkedHashMap<>();
        if (sets.isEmpty()) return staged;
        LOG.info(
                "run {}: attribution of {} over {} (impressions from {})",
                runId,
                sets.stream().map(MetricSet::name).toList(),
                range,
                Instant.ofEpochMilli(rule.earliestImpressionTs(range.fromMillis())));
        Dataset<Row> judged = AttributionAggregation.judged(
                        new LakeReader(run.spark(), run.settings().lakePath())
                                .read(List.of(AttributionAggregation.lookback(range, rule))),
                        rule,
                        range.fromMillis(),
                        range.toMillis())
                .persist(StorageLevel.MEMORY_AND_DISK());
        try {
            for (MetricSet set : sets) {
                Dataset<Row> rows = AttributionAggregation.perKey(
                                judged, set, run.settings().sets().attributes())
                        .persist(StorageLevel.MEMORY_AND_DISK());
                try {
                    long count = rows.count();
                    run.staging().write(StagingWriter.Target.attribution(set), rows, count, runId, conn);
                    staged.put(set.name(), count);
                } finally {
                    rows.unpersist();
                }
            }
        } finally {
            judged.unpersist();
        }
        return staged;
    }
}
