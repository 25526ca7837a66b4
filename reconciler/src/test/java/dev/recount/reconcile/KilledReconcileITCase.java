package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Status;
import dev.recount.reconcile.bench.ReconcileBench;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ReconcileDb;
import dev.recount.reconcile.testutils.ServedState;
import dev.recount.testkit.Poll;
import dev.recount.testkit.ServerProcesses;
import dev.recount.testkit.Signals;
import java.io.File;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real `reconcile` process (ReconcileMain in a child JVM, as `./recount reconcile` starts it) killed with
 * kill -9 in the middle of its transaction, after its statement wrote the diffs, the corrections and the log for
 * a day of 50,400 keys. What finance sees must be exactly what it was before; the next run marks the dead run
 * failed and does the work.
 *
 * <p>The kill lands at a known point without guessing at timing: this test holds locks the run needs. First a
 * SHARE lock on window_corrections, which stops the run's statement before it writes anything; once the run is
 * waiting there, a FOR UPDATE lock on the run's own row and the SHARE lock released. The run's statement then
 * writes everything and waits at its end, where the foreign-key checks of its diffs and log entries need a key
 * share of that row. There it is killed.
 */
class KilledReconcileITCase {
    static final Instant DAY = ReconcileBench.DAY;
    static final Scope FIRST_HOURS = ScopeResolver.range(DAY, DAY.plus(Duration.ofHours(6)));
    static final Scope WHOLE_DAY = ScopeResolver.range(DAY, DAY.plus(Duration.ofDays(1)));
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    ReconcileDb db;
    Process child;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("killed");
        db.loadDay(7, 5); // 1440 windows x 35 keys
    }

    @AfterEach
    void tearDown() {
        if (child != null) child.destroyForcibly();
        db.close();
    }

    Reconciler reconciler() {
        return new Reconciler(
                db.reconcilerPool(),
                new Reconciler.Settings(ZoneId.of("UTC"), DefaultSet.SETS, tmp.resolve("reports")),
                Clock.fixed(Instant.parse("2026-11-29T02:00:00Z"), ZoneOffset.UTC));
    }

    @Test
    void aRunKilledMidTransactionChangesNothingAndTheNextRunFailsIt() throws Exception {
        reconciler().reconcile(FIRST_HOURS); // corrections and log entries the killed run must leave as they are
        ServedState before = served();
        long runId;
        int backend;
        try (Connection gate = db.admin();
                Connection rowGate = db.admin()) {
            gate.setAutoCommit(false);
            try (Statement st = gate.createStatement()) {
                st.execute("LOCK TABLE window_corrections IN SHARE MODE");
            }
            child = startReconcile(
                    "--from",
                    WHOLE_DAY.from().toString(),
                    "--to",
                    WHOLE_DAY.to().toString());
            backend = Poll.untilPresent(
                    WAIT,
                    "the reconcile process waiting to write window_corrections",
                    () -> ServerProcesses.waitingFor(gate, "relation").stream().findFirst());
            runId = runningRun(gate);

            rowGate.setAutoCommit(false);
            try (PreparedStatement ps =
                    rowGate.prepareStatement("SELECT 1 FROM reconciliation_runs WHERE run_id = ? FOR UPDATE")) {
                ps.setLong(1, runId);
                ps.executeQuery().close();
            }
            gate.commit(); // the statement runs: diffs, corrections, log ... then waits for the run row
            Poll.until(
                    WAIT,
                    "the reconcile statement to have written and to wait for its run's row",
                    () -> !ServerProcesses.waitingFor(rowGate, "transactionid").isEmpty());
            try (Connection c = db.admin()) {
                assertThat(count(
                                c,
                                "SELECT count(*) FROM pg_stat_activity WHERE pid = " + backend
                                        + " AND backend_xid IS NOT NULL AND state = 'active'"))
                        .as("mid-transaction, having written")
                        .isOne();
            }

            kill9(child);
            assertThat(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            // The server notices the dead client within client_connection_check_interval and rolls back, even
            // though the statement is still waiting for a lock.
            Poll.until(WAIT, "the killed run's server process to end", () -> {
                // A fresh session each time: pg_stat_activity is a snapshot per transaction.
                try (Connection c = db.admin()) {
                    return count(c, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + backend) == 0;
                }
            });
            rowGate.rollback();
        }

        assertThat(served())
                .as("what finance sees is exactly as before the killed run")
                .isEqualTo(before);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM reconciliation_diffs WHERE run_id = " + runId))
                    .isZero();
            assertThat(ReconciliationRunsTable.find(c, runId).orElseThrow().status())
                    .isEqualTo(Status.RUNNING);
        }
        assertThat(Files.readString(tmp.resolve("child.log"))).doesNotContain("succeeded");

        RunResult next = reconciler().reconcile(WHOLE_DAY);
        try (Connection c = db.admin()) {
            ReconciliationRunsTable.Run killed =
                    ReconciliationRunsTable.find(c, runId).orElseThrow();
            assertThat(killed.status()).isEqualTo(Status.FAILED);
            assertThat(killed.error()).startsWith("abandoned: ").endsWith("found by run " + next.runId());
            assertThat(count(c, "SELECT count(*) FROM window_metrics WHERE NOT is_final"))
                    .isZero();
            assertThat(count(c, "SELECT count(*) FROM correction_log WHERE reconciliation_run_id = " + runId))
                    .isZero();
        }
        assertThat(next.valuesCorrected()).isPositive();
    }

    @Test
    void aFirstRunKilledWhileItsSurveyIsReadBesideLeavesNoTableAndNoServerProcess() throws Exception {
        // A first run of the day joins stream and batch and reads its survey on a second connection while its own
        // fills a new table with the batch's rows. Both stop at rows this test holds, and the process is killed there:
        // both of its server processes must end (each checks that the process is still connected), and nothing of
        // the run remain.
        ServedState before = served();
        long runId;
        List<Integer> backends;
        try (Connection gate = db.admin()) {
            gate.setAutoCommit(false);
            try (Statement st = gate.createStatement()) {
                st.execute("LOCK TABLE stream_window_metrics, batch_window_metrics IN ACCESS EXCLUSIVE MODE");
            }
            child = startReconcile(
                    "--from",
                    WHOLE_DAY.from().toString(),
                    "--to",
                    WHOLE_DAY.to().toString());
            backends =
                    Poll.untilPresent(WAIT, "the run's new table and its join beside both waiting for the rows", () -> {
                        List<Integer> waiting = ServerProcesses.waitingFor(gate, "relation");
                        return waiting.size() == 2 ? Optional.of(waiting) : Optional.empty();
                    });
            runId = runningRun(gate);

            kill9(child);
            assertThat(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            Poll.until(WAIT, "both server processes of the killed run to end, still waiting for the lock", () -> {
                try (Connection c = db.admin()) {
                    return count(
                                    c,
                                    "SELECT count(*) FROM pg_stat_activity WHERE pid IN (" + backends.get(0) + ", "
                                            + backends.get(1) + ")")
                            == 0;
                }
            });
            gate.rollback();
        }

        assertThat(served())
                .as("what finance sees is exactly as before the killed run")
                .isEqualTo(before);
        try (Connection c = db.admin()) {
            ReconcilerITCase.assertNoNewPartition(c);
            assertThat(count(c, "SELECT count(*) FROM reconciliation_diffs WHERE run_id = " + runId))
                    .isZero();
        }

        RunResult next = reconciler().reconcile(WHOLE_DAY);
        assertThat(next.keysFinalized()).isEqualTo(1440L * 35);
        try (Connection c = db.admin()) {
            assertThat(ReconciliationRunsTable.find(c, runId).orElseThrow().status())
                    .isEqualTo(Status.FAILED);
            assertThat(count(c, "SELECT count(*) FROM window_corrections_partitions WHERE attached"))
                    .isOne();
            assertThat(count(c, "SELECT count(*) FROM window_metrics WHERE NOT is_final"))
                    .isZero();
        }
    }

    /** `reconcile ...` in a child JVM on this test's classpath, configured for this test's schema. */
    private Process startReconcile(String... args) throws Exception {
        Path config = db.configFile(tmp, "reconcile.report-dir=" + tmp.resolve("reports"));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                ReconcileMain.class.getName()));
        command.addAll(List.of(args));
        command.addAll(List.of("--config", config.toString()));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve("child.log").toFile());
        pb.environment().putAll(db.environment());
        assertThat(System.getProperty("java.class.path")).contains("reconciler" + File.separator + "target");
        return pb.start();
    }

    private static void kill9(Process p) throws Exception {
        Signals.send("KILL", p.pid());
    }

    private static long runningRun(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT run_id FROM reconciliation_runs WHERE status = 'running'")) {
            assertThat(rs.next()).as("the run's row").isTrue();
            long id = rs.getLong(1);
            assertThat(rs.next()).as("one running run").isFalse();
            return id;
        }
    }

    private ServedState served() throws SQLException {
        try (Connection c = db.admin()) {
            return ServedState.read(c);
        }
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
