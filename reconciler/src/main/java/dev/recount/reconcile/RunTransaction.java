package dev.recount.reconcile;

import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.db.tables.ServingSettingsTable;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run's REPEATABLE READ transaction: which of its metric sets the batch layer covered, each covered set's
 * reconciliation ({@link SetReconciliation}) one after the other in the same snapshot, the report ({@link RunReport}),
 * the first runs' new partitions attached, and the run's {@code succeeded} row, all committed together. A set no batch
 * run covers is left out and named (the others are still reconciled); when no set is covered, the run is refused.
 * Any error rolls everything back.
 */
final class RunTransaction {
    private static final Logger LOG = LoggerFactory.getLogger(RunTransaction.class);

    private final DataSource dataSource;
    private final Reconciler.Settings settings;
    private final Clock clock;
    private final RunProgress progress;

    RunTransaction(DataSource dataSource, Reconciler.Settings settings, Clock clock, RunProgress progress) {
        this.dataSource = dataSource;
        this.settings = settings;
        this.clock = clock;
        this.progress = progress;
    }

    /** The sets of the run's definitions that {@code scope} covers, in the definitions' order. */
    static List<MetricSet> setsOf(Reconciler.Settings settings, Scope scope) {
        return settings.sets().sets().stream()
                .filter(s -> scope.covers(s.name()))
                .toList();
    }

    /**
     * Runs the transaction on {@code conn} (autocommit on; left so): the report is written into {@code tempDir},
     * recorded as {@code finalDir}.
     *
     * @throws NotCoveredException when no set of the scope is covered, or a set's stream and batch rows have
     *     different window sizes
     */
    RunResult run(
            Connection conn, Scope scope, Reconciler.Mode mode, long runId, Path finalDir, Path tempDir, long started)
            throws SQLException, IOException {
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        conn.setAutoCommit(false);
        boolean committed = false;
        try {
            // The default 4 MB makes the day-sized join and the grouping spill to disk. (Validated: a size, no quotes.)
            try (Statement st = conn.createStatement()) {
                st.execute("SET LOCAL work_mem = '" + settings.workMem() + "'");
            }
            List<MetricSet> sets = setsOf(settings, scope);
            progress.stage("checking that succeeded batch runs cover the range");
            List<SetReconciliation> covered = new ArrayList<>();
            Map<String, String> notCovered = new LinkedHashMap<>();
            for (MetricSet set : sets) {
                SetReconciliation r = new SetReconciliation(
                        dataSource, settings, progress, sets.size() > 1 ? "set " + set.name() + ": " : "", set);
                Optional<String> gap = Coverage.gap(conn, r.statements(), scope.of(set.name()));
                if (gap.isPresent()) notCovered.put(set.name(), gap.get());
                else covered.add(r);
            }
            if (covered.isEmpty()) throw new NotCoveredException(String.join("; ", notCovered.values()));
            notCovered.forEach((set, why) -> LOG.warn("run {}: set {} not reconciled: {}", runId, set, why));
            // The read side's days (daily_metrics) must be the days this run and its report use. A dry run changes
            // nothing that is served, so it leaves the recorded zone alone.
            if (mode == Reconciler.Mode.APPLY)
                ServingSettingsTable.recordTimeZone(conn, settings.zone(), scope.from(), scope.to());
            ScopeDays days = ScopeDays.of(scope, settings.zone());
            List<SetReconciliation.Done> done = new ArrayList<>();
            long reconcileNanos = 0, checkNanos = 0;
            for (SetReconciliation r : covered) {
                SetReconciliation.Done d =
                        r.reconcile(conn, scope.of(r.statements().set().name()), mode, runId, days);
                done.add(d);
                reconcileNanos += d.reconcileNanos();
                checkNanos += d.checkNanos();
            }
            List<SetResult> results =
                    done.stream().map(SetReconciliation.Done::result).toList();
            Verdict verdict = results.stream().allMatch(r -> r.verdict() == Verdict.WITHIN_TOLERANCE)
                    ? Verdict.WITHIN_TOLERANCE
                    : Verdict.BEYOND_TOLERANCE;
            long reportStarted = System.nanoTime();
            ReportDirectory.deleteQuietly(tempDir);
            progress.stage("writing the report");
            RunReport report =
                    new RunReport(runId, scope, settings.zone(), clock.instant(), verdict, mode, results, notCovered);
            report.write(conn, tempDir, progress);
            long reportNanos = System.nanoTime() - reportStarted;
            for (SetReconciliation.Done d : done) {
                if (d.newPartition().isEmpty()) continue;
                NewPartition p = d.newPartition().get();
                progress.stage("attaching the new partition of " + p.tables().windowCorrections());
                if (!p.attach(conn)) {
                    LOG.warn(
                            "run {}: attaching {} would have waited more than {} s for a query reading"
                                    + " {}; its rows were moved into {} (its default partition) instead",
                            runId,
                            p.name(),
                            NewPartition.ATTACH_LOCK_TIMEOUT.toSeconds(),
                            p.tables().windowCorrectionsDefaultPartition(),
                            p.tables().windowCorrections());
                }
            }
            ReconciliationRunsTable.succeed(
                    conn,
                    runId,
                    report.outcome(finalDir),
                    results.stream().map(SetResult::name).toList());
            progress.stage("committing");
            conn.commit();
            committed = true;
            long finished = System.nanoTime();
            return new RunResult(
                    runId,
                    scope,
                    mode == Reconciler.Mode.DRY_RUN,
                    verdict,
                    results,
                    notCovered,
                    finalDir,
                    new RunResult.Timings(
                            Duration.ofNanos(reconcileNanos),
                            Duration.ofNanos(checkNanos),
                            Duration.ofNanos(reportNanos),
                            Duration.ofNanos(finished - started)));
        } finally {
            // Roll back before leaving transaction mode: setAutoCommit(true) would commit the half-done work.
            if (!committed) rollbackQuietly(conn);
            conn.setAutoCommit(true);
            conn.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    private static void rollbackQuietly(Connection conn) {
        try {
            conn.rollback();
        } catch (SQLException e) {
            LOG.warn("rollback failed: {}", e.getMessage());
        }
    }
}
