package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.reconcile.testutils.ReconcileDb;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The survey read on a second connection sees exactly the run's snapshot, against a real PostgreSQL. */
class SnapshotSurveyITCase {
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
            before = ScopeSurvey.read(run, RANGE, DAYS, Map.of(), 0);
            // Committed by another session after the run's snapshot: a new stream key and a changed batch value.
            db.stream(key(ReconcilerITCase.W1, "camp-c", "app"), m(1, 1, 1, 1, 3), 1);
            db.batchRange(
                    ReconcilerITCase.FROM, ReconcilerITCase.TO, ReconcilerITCase.batchRows(m(11, 3, 0, 1_750_000, 14)));

            ScopeSurvey beside;
            try (SnapshotSurvey pending =
                    SnapshotSurvey.start(db.reconcilerPool(), run, RANGE, DAYS, Map.of(), 0, Reconciler.WORK_MEM)) {
                beside = pending.get();
            }
            assertThat(beside).isEqualTo(before);
            run.rollback();
        }
        // Read now, the same scope has both changes: the survey above could have seen them.
        try (Connection now = db.reconcilerPool().getConnection()) {
            ScopeSurvey after = ScopeSurvey.read(now, RANGE, DAYS, Map.of(), 0);
            assertThat(after).isNotEqualTo(before);
            long streamKeys = after.windows().values().stream()
                    .mapToLong(w -> w.stream().keys())
                    .sum();
            assertThat(streamKeys).isEqualTo(4);
        }
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
