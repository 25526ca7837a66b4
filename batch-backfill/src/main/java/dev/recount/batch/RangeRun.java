package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable.Mode;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable.ReplaceResult;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.WindowSizes;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code range} (or the day of a {@code nightly}) run: every window of every set it computes in {@code [from, to)},
 * recomputed from one read of the lake and replaced in each set's tables, with the run's status, in one transaction.
 */
final class RangeRun {
    private static final Logger LOG = LoggerFactory.getLogger(RangeRun.class);

    private final RunContext run;

    RangeRun(RunContext run) {
        this.run = run;
    }

    BackfillRunner.RangeReport run(Mode mode, TimeRange range, boolean force) throws SQLException {
        range.requireAligned(run.sets());
        long started = System.nanoTime();
        BackfillSettings settings = run.settings();
        try (Connection conn = run.db().getConnection()) {
            long runId = RunLifecycle.start(run, conn, mode, range.fromMillis(), range.toMillis(), force);
            LOG.info(
                    "run {}: {} {} of metric sets {}{}",
                    runId,
                    mode.wireName(),
                    range,
                    run.names(),
                    force ? " (forced)" : "");
            try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout());
                    ProgressReporter progress =
                            ProgressReporter.start(run.spark(), "run " + runId, run.progressInterval())) {
                Optional<Long> until = requireComplete(conn, range.toMillis(), force);
                for (MetricSet set : run.computed()) requireStreamWindowSize(conn, set, range);
                List<MetricSet> attributed =
                        run.computed().stream().filter(MetricSet::attribution).toList();
                AttributionRule rule =
                        attributed.isEmpty() ? null : settings.attribution().rule();
                // With attribution, the impressions one attribution window before the range are read too: lock
                // their days as well, so no compaction swaps those hours meanwhile.
                TimeRange read = rule == null ? range : AttributionAggregation.lookback(range, rule);
                locks.lockRange(read, settings.shortestWindow());
                run.describeJobs(runId, mode.wireName() + " " + range);
                LOG.info("run {}: reading the lake at {}", runId, settings.lakePath());
                LakeReader lake = new LakeReader(run.spark(), settings.lakePath());
                Dataset<Row> lakeRows = lake.read(List.of(range));
                // What the stream archived into the hours read, before they are read: see requireLakeHoldsArchived.
                SortedMap<Long, Long> archived = LakeShortfall.archived(conn, List.of(read));
                SetRecompute.Computed c = SetRecompute.stage(
                        run,
                        conn,
                        runId,
                        lakeRows,
                        run.computed().stream()
                                .map(WindowAggregation.SetScope::all)
                                .toList());
                Map<Long, Long> known = archived.isEmpty() ? Map.of() : c.lakeRowsByWholeHour(range);
                List<LakeShortfall.Hour> shortHours = requireLakeHoldsArchived(runId, lake, archived, known, force);
                long events = c.distinctEvents();
                ObjectNode details = c.details(events);
                details.put(
                        "lake_complete_until",
                        until.map(ms -> Instant.ofEpochMilli(ms).toString()).orElse(null));
                if (!shortHours.isEmpty()) details.put("lake_short_hours", LakeShortfall.describe(shortHours));
                Map<String, Long> attribution = rule == null
                        ? Map.of()
                        : SetRecompute.stageAttribution(run, conn, runId, range, rule, attributed);
                attribution.forEach(
                        (set, rows) -> RunOutput.setDetails(details, set).put("attribution_rows", rows));
                BatchWindowMetricsTable.Range scope =
                        new BatchWindowMetricsTable.Range(range.fromMillis(), range.toMillis());
                List<RunLifecycle.SetReplace> replaces = new ArrayList<>();
                for (MetricSet set : run.computed()) {
                    replaces.add(new RunLifecycle.SetReplace(set, scope, attribution.containsKey(set.name())));
                }
                RunLifecycle.Committed<Void> done =
                        RunLifecycle.commit(conn, runId, replaces, events, null, null, details, null);
                List<BackfillRunner.SetOutcome> outcomes = new ArrayList<>();
                for (MetricSet set : run.computed()) {
                    SetRecompute.SetComputed s = c.of(set);
                    ReplaceResult r = done.perSet().get(set.name());
                    outcomes.add(new BackfillRunner.SetOutcome(
                            set.name(),
                            List.of(),
                            s.events(),
                            s.leftOut(),
                            r.written(),
                            r.unchanged(),
                            r.deleted(),
                            attribution.get(set.name())));
                }
                return new BackfillRunner.RangeReport(
                        runId,
                        mode,
                        range,
                        force,
                        events,
                        c.lakeRows(),
                        outcomes,
                        Duration.ofNanos(System.nanoTime() - started));
            } catch (Exception | Error e) {
                RunLifecycle.recordFailure(run, conn, runId, e);
                throw e;
            }
        }
    }

    /** Refuses a range ending after the lake's completeness boundary (or when none is recorded) unless forced. */
    private static Optional<Long> requireComplete(Connection conn, long toMillis, boolean force) throws SQLException {
        Optional<Long> until = StreamProgressTable.lakeCompleteUntil(conn);
        if (until.isPresent() && toMillis <= until.get()) return until;
        String why = until.isEmpty()
                ? "no lake completeness recorded yet (the stream job has not committed a checkpoint)"
                : "the lake is complete only until " + Instant.ofEpochMilli(until.get());
        if (!force) {
            throw BackfillException.refusedByBoundary("range ends at " + Instant.ofEpochMilli(toMillis) + " but " + why
                    + "; rerun later, or pass --force to recompute from an incomplete lake");
        }
        LOG.warn("forced: range ends at {} but {}", Instant.ofEpochMilli(toMillis), why);
        return until;
    }

    /**
     * Refuses to recompute from lake hours that hold fewer rows than the stream archived into them ({@link
     * LakeShortfall}): their totals would come out low, and batch wins. {@code archived} was read before the lake;
     * {@code known} holds the hours the recompute already summed, so only the others, and those that look short, are
     * counted from the files. Forced, it goes on and returns them (the run records them); otherwise none is
     * returned. Nothing is replaced before it returns.
     */
    private List<LakeShortfall.Hour> requireLakeHoldsArchived(
            long runId, LakeReader lake, SortedMap<Long, Long> archived, Map<Long, Long> known, boolean force) {
        List<LakeShortfall.Hour> shortHours = LakeShortfall.find(
                archived, known, lake::rowsByHour, run.settings().lakeCheckWait());
        if (shortHours.isEmpty()) return shortHours;
        String what = shortHours.size() + " lake hour(s) hold fewer rows than the stream archived into them: "
                + LakeShortfall.describe(shortHours);
        if (!force) {
            throw BackfillException.refused(what + ". Their files were lost or deleted, or the stream job has not"
                    + " committed them yet: start it if it is down, restore the files, or pass --force to recompute"
                    + " from what the lake holds (docs/operations.md, \"The lake lost files\")");
        }
        LOG.warn("run {}: forced: {}", runId, what);
        return shortHours;
    }

    /** Refuses a range whose stream rows of {@code set} have another window size than the set's (never a match). */
    private static void requireStreamWindowSize(Connection conn, MetricSet set, TimeRange range) throws SQLException {
        Optional<String> why = WindowSizes.mismatch(
                conn,
                new SetTables(set).streamWindowMetrics(),
                range.fromMillis(),
                range.toMillis(),
                set.window().toMillis());
        if (why.isPresent()) throw BackfillException.refused(why.get());
    }
}
