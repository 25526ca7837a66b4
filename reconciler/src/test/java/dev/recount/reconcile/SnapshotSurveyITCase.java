package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ReconcileDb;
import dev.recount.testkit.Poll;
import dev.recount.testkit.ServerProcesses;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The survey read on a second connection sees exactly the run's snapshot, against a real PostgreSQL. */
class SnapshotSurveyITCase {
    static final ReconcileStatements SQL = new ReconcileStatements(DefaultSet.TABLES);
    static final Scope RANGE = ScopeResolver.range(ReconcilerITCase.FROM, ReconcilerITCase.TO);
    static final ScopeDays DAYS = ScopeDays.of(RANGE, ReconcilerITCase.ZONE);

    ReconcileDb db;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("snapshot-survey");
        ReconcilerITCase.fill(db);
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    @Test
    void readsTheRunsSnapshotNotWhatWasCommittedSince() throws Exception {
        ScopeSurvey before;
        try (Connection run = runTransaction()) {
            before = ScopeSurvey.read(run, SQL, RANGE, DAYS, Map.of(), 0);
            // Committed by another session after the run's snapshot: a new stream key and a changed batch value.
            db.stream(key(ReconcilerITCase.W1, "camp-c", "app"), m(1, 1, 1, 1, 3), 1);
            db.batchRange(
                    ReconcilerITCase.FROM, ReconcilerITCase.TO, ReconcilerITCase.batchRows(m(11, 3, 0, 1_750_000, 14)));

            ScopeSurvey beside;
            try (SnapshotSurvey pending = SnapshotSurvey.start(
                    db.reconcilerPool(), run, SQL, RANGE, DAYS, 0, Reconciler.WORK_MEM, null, null)) {
                beside = pending.get();
            }
            assertThat(beside).isEqualTo(before);
            run.rollback();
        }
        // Read now, the same scope has both changes: the survey above could have seen them.
        try (Connection now = db.reconcilerPool().getConnection()) {
            ScopeSurvey after = ScopeSurvey.read(now, SQL, RANGE, DAYS, Map.of(), 0);
            assertThat(after).isNotEqualTo(before);
            long streamKeys = after.windows().values().stream()
                    .mapToLong(w -> w.stream().keys())
                    .sum();
            assertThat(streamKeys).isEqualTo(4);
        }
    }

    /**
     * The diffs a first run reads beside it are the rows its own join would write in its snapshot, loaded on its
     * connection: a key committed after the snapshot is in neither.
     */
    @Test
    void theDiffsReadBesideAreTheRunsOwnJoinInItsSnapshot() throws Exception {
        try (Connection run = runTransaction()) {
            // Committed after the run's snapshot: a key only the stream has, and a batch value that now differs.
            db.stream(key(ReconcilerITCase.W1, "camp-c", "app"), m(1, 1, 1, 1, 3), 1);
            db.batchRange(
                    ReconcilerITCase.FROM, ReconcilerITCase.TO, ReconcilerITCase.batchRows(m(11, 3, 0, 1_750_000, 14)));
            Sql differing = SQL.differingKeys(RANGE, RUN);
            try (DiffsFile file = DiffsFile.create();
                    SnapshotSurvey pending = SnapshotSurvey.start(
                            db.reconcilerPool(), run, SQL, RANGE, DAYS, 0, Reconciler.WORK_MEM, differing, file)) {
                DiffsFile diffs = pending.diffs();
                assertThat(diffs).isSameAs(file);
                assertThat(diffs.named())
                        .as("no name while open, on this POSIX file system")
                        .isFalse();
                assertThat(diffs.rows()).as("mismatch, only batch, only stream").isEqualTo(3);
                assertThat(diffs.load(run, DefaultSet.DIFFS)).isEqualTo(3);
                pending.get();
            }
            // The same query on the run's connection, in its snapshot: exactly the rows loaded.
            try (var ps = differing.prepare(run);
                    ResultSet own = ps.executeQuery();
                    Statement st = run.createStatement();
                    ResultSet loaded = st.executeQuery("SELECT " + DefaultSet.DIFFS.insertColumns()
                            + " FROM reconciliation_diffs WHERE run_id = " + RUN
                            + " ORDER BY window_start, campaign_id, channel_id")) {
                java.util.List<java.util.List<Object>> ownRows = rows(own), loadedRows = rows(loaded);
                assertThat(loadedRows).hasSize(3).containsExactlyInAnyOrderElementsOf(ownRows);
                assertThat(loadedRows)
                        .extracting(r -> r.get(5))
                        .containsExactlyInAnyOrder("mismatch", "missing_in_stream", "missing_in_batch");
            }
            run.rollback();
        }
    }

    @Test
    void closingASurveyThatIsStillReadCancelsIt() throws Exception {
        // The survey waits for the stream's rows, which this test holds; the run fails meanwhile and closes it.
        try (Connection gate = db.admin();
                Connection run = runTransaction()) {
            gate.setAutoCommit(false);
            try (Statement st = gate.createStatement()) {
                st.execute("LOCK TABLE stream_window_metrics IN ACCESS EXCLUSIVE MODE");
            }
            DiffsFile file = DiffsFile.create();
            SnapshotSurvey pending = SnapshotSurvey.start(
                    db.reconcilerPool(),
                    run,
                    SQL,
                    RANGE,
                    DAYS,
                    0,
                    Reconciler.WORK_MEM,
                    SQL.differingKeys(RANGE, RUN),
                    file);
            Poll.until(
                    Duration.ofSeconds(30),
                    "the survey to wait for the stream's rows",
                    () -> ServerProcesses.waitingFor(gate, null).size() == 1);
            assertTimeoutPreemptively(Duration.ofSeconds(30), pending::close, "closed while the lock is still held");
            assertThatThrownBy(pending::get).isInstanceOf(SQLException.class).hasMessageContaining("cancel");
            assertThatThrownBy(pending::diffs).isInstanceOf(SQLException.class).hasMessageContaining("cancel");
            file.close();
            gate.rollback();
        }
        assertThat(db.reconcilerPool().getHikariPoolMXBean().getActiveConnections())
                .as("the survey's connection is back in the pool")
                .isZero();
    }

    /** Any run id: reconciliation_diffs has no foreign key to the runs (V18), and each test's schema is its own. */
    private static final long RUN = 4242;

    private static java.util.List<java.util.List<Object>> rows(ResultSet rs) throws SQLException {
        java.util.List<java.util.List<Object>> rows = new java.util.ArrayList<>();
        int columns = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            java.util.List<Object> row = new java.util.ArrayList<>();
            for (int i = 1; i <= columns; i++) {
                Object v = rs.getObject(i);
                // The query's values and the table's columns may differ in type, not in value.
                row.add(v instanceof Number n ? new java.math.BigDecimal(n.toString()).stripTrailingZeros() : v);
            }
            rows.add(row);
        }
        return rows;
    }

    /** A connection in a REPEATABLE READ transaction whose snapshot is taken (as a run's is by its first reads). */
    private Connection runTransaction() throws SQLException {
        Connection run = db.reconcilerPool().getConnection();
        run.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        run.setAutoCommit(false);
        try (Statement st = run.createStatement()) {
            st.execute("SELECT 1");
        }
        return run;
    }
}
