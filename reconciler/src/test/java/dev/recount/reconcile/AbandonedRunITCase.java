package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Status;
import dev.recount.reconcile.bench.ReconcileBench;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ReconcileDb;
import dev.recount.reconcile.testutils.ServedState;
import dev.recount.testkit.ServerProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reconciliation whose process dies mid-run (kill -9, out of memory, lost machine) leaves its run "running"
 * and nothing else: its transaction never committed. The next run marks it failed ("abandoned: ...") — but never
 * a run that is still alive. Runs are simulated with this test's own connections, as batch-backfill's test of the
 * same rule does: {@link ReconciliationRunsTable#start} and the run's own statement on a connection are exactly
 * what a reconciliation does, and closing that connection mid-transaction is what PostgreSQL sees when the process
 * dies. (KilledReconcileITCase kills a real `reconcile` process.)
 */
class AbandonedRunITCase {
    static final Instant DAY = ReconcileBench.DAY;
    static final Scope FIRST_HOURS = ScopeResolver.range(DAY, DAY.plus(Duration.ofHours(6)));
    static final Scope WHOLE_DAY = ScopeResolver.range(DAY, DAY.plus(Duration.ofDays(1)));
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T02:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path reports;

    ReconcileDb db;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("abandoned");
        db.loadDay(3, 2); // 1440 windows x 6 keys, 2 % of them differing
        // Finalized and logged already: what a killed run must leave exactly as it is.
        reconciler().reconcile(FIRST_HOURS);
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    Reconciler reconciler() {
        return new Reconciler(
                db.reconcilerPool(), new Reconciler.Settings(ZoneId.of("UTC"), DefaultSet.SETS, reports), CLOCK);
    }

    @Test
    void theNextRunFailsDeadRunsWhoseWorkNeverBecameVisibleButLeavesLiveOnesAlone() throws Exception {
        ServedState before = served();
        long dead;
        int killedBackend;
        try (Connection killed = db.admin()) {
            killedBackend = ServerProcesses.of(killed);
            dead = ReconciliationRunsTable.start(killed, WHOLE_DAY.fromMillis(), WHOLE_DAY.toMillis(), null);
            killed.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            killed.setAutoCommit(false);
            try (PreparedStatement ps = new ReconcileStatements(DefaultSet.TABLES)
                    .reconcile(WHOLE_DAY, dead, true)
                    .prepare(killed)) {
                ps.executeQuery().close();
            }
            // Its writes are there, for its own transaction only.
            assertThat(count(killed, "SELECT count(*) FROM window_corrections")).isEqualTo(1440 * 6);
            assertThat(DefaultSet.LOG.readRun(killed, dead)).isNotEmpty();
        } // the process dies: its session ends without a commit
        // Its server process ends (and drops its locks) a moment after the connection closes.
        awaitEnded(killedBackend);
        assertThat(served()).as("nothing of the dead run is visible").isEqualTo(before);
        assertThat(run(dead).status()).as("until the next run looks").isEqualTo(Status.RUNNING);

        try (Connection alive = db.admin()) {
            long live = ReconciliationRunsTable.start(
                    alive, DAY.toEpochMilli(), DAY.plusSeconds(60).toEpochMilli(), null);

            RunResult next = reconciler().reconcile(WHOLE_DAY);

            ReconciliationRunsTable.Run deadRun = run(dead);
            assertThat(deadRun.status()).isEqualTo(Status.FAILED);
            assertThat(deadRun.error()).startsWith("abandoned: ").contains("found by run " + next.runId());
            assertThat(run(live).status())
                    .as("a run whose session lives is still running")
                    .isEqualTo(Status.RUNNING);
            assertThat(run(next.runId()).status()).isEqualTo(Status.SUCCEEDED);
            try (Connection c = db.admin()) {
                assertThat(DefaultSet.LOG.readRun(c, dead)).isEmpty();
                assertThat(DefaultSet.DIFFS.readRun(c, dead)).isEmpty();
                // The next run did the work the dead one never committed: the whole day is final now.
                assertThat(count(c, "SELECT count(*) FROM window_metrics WHERE NOT is_final"))
                        .isZero();
                assertThat(next.valuesCorrected()).isPositive();
            }
            // The second session ends too; the next run cleans it up as well.
            int aliveBackend = ServerProcesses.of(alive);
            alive.close();
            awaitEnded(aliveBackend);
            RunResult third = reconciler().reconcile(FIRST_HOURS);
            assertThat(run(live).status()).isEqualTo(Status.FAILED);
            assertThat(run(live).error()).contains("found by run " + third.runId());
        }
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM reconciliation_runs WHERE status = 'running'"))
                    .isZero();
            // Finished runs released their liveness locks (two-key advisory locks): the pooled connections they ran
            // on, still open, hold none.
            assertThat(count(c, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2"))
                    .isZero();
        }
    }

    /**
     * A run killed after its commit, before its report directory was moved into place: the next run moves it where
     * the run's record says it is. A ".partial" directory no succeeded run names is left alone.
     */
    @Test
    void theNextRunMovesTheReportOfARunKilledAfterItsCommitIntoPlace() throws Exception {
        ReconciliationRunsTable.Run first;
        try (Connection c = db.admin()) {
            first = ReconciliationRunsTable.find(c, 1).orElseThrow();
        }
        Path reportDir = Path.of(first.reportDir());
        Path partial = reportDir.resolveSibling(reportDir.getFileName() + ".partial");
        Files.move(reportDir, partial); // as the killed run left it
        Path stranger = Files.createDirectory(reports.resolve("run-999-20261128T000000Z.partial"));

        reconciler().reconcile(WHOLE_DAY);

        assertThat(reportDir).isDirectory();
        assertThat(partial).doesNotExist();
        try (java.util.stream.Stream<Path> files = Files.list(reportDir)) {
            assertThat(files.count()).isPositive();
        }
        assertThat(stranger).as("no succeeded run names it").isDirectory();
    }

    private ServedState served() throws SQLException {
        try (Connection c = db.admin()) {
            return ServedState.read(c);
        }
    }

    private ReconciliationRunsTable.Run run(long runId) throws SQLException {
        try (Connection c = db.admin()) {
            return ReconciliationRunsTable.find(c, runId).orElseThrow();
        }
    }

    private void awaitEnded(int pid) {
        ServerProcesses.awaitEnded(db::admin, pid, Duration.ofSeconds(30));
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
