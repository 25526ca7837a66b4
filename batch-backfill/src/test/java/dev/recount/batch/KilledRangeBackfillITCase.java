package dev.recount.batch;

import static dev.recount.batch.AffectedBackfillITCase.row;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.ChildBackfill;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Status;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.Poll;
import dev.recount.testkit.ServerProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real `backfill range` process (BackfillMain in a child JVM, its own SparkSession) killed with kill -9 while it
 * stages its windows and at the last statement of its one transaction, after the replace: the rows finance would see
 * must be exactly the previous result; the next run marks the killed one failed and replaces them with the new one.
 * `nightly` recomputes its day through the same transaction. Stopped at known points as in {@link
 * KilledAffectedBackfillITCase}: the test holds the advisory lock of the range's day first, so the child records its
 * run and waits; then takes the lock the moment under test needs, and lets the day go.
 */
class KilledRangeBackfillITCase {
    static final Duration WAIT = Duration.ofSeconds(90);
    static final long MINUTE = 60_000;
    static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    static final String FROM = "2026-11-28T10:00:00Z";
    static final String TO = "2026-11-28T10:02:00Z";

    static final LakeEvent E1 = LakeEvent.of("e1", "impression", W + 1_000, "c1", "ch1", 10, 1);
    static final LakeEvent E2 = LakeEvent.of("e2", "click", W + MINUTE + 1_000, "c1", "ch1", 20, 2);
    /** Reach the lake after the first run: the killed run would count them. */
    static final LakeEvent E3 = LakeEvent.of("e3", "conversion", W + 2_000, "c1", "ch1", 30, 3);

    static final LakeEvent E4 = LakeEvent.of("e4", "impression", W + MINUTE + 2_000, "c2", "ch1", 5, 4);

    static final List<WindowRow> FIRST = List.of(
            row(W, "c1", "ch1", MeasureValues.of(1, 0, 0, 10, 1)),
            row(W + MINUTE, "c1", "ch1", MeasureValues.of(0, 1, 0, 20, 1)));
    static final List<WindowRow> SECOND = List.of(
            row(W, "c1", "ch1", MeasureValues.of(1, 0, 1, 40, 2)),
            row(W + MINUTE, "c1", "ch1", MeasureValues.of(0, 1, 0, 20, 1)),
            row(W + MINUTE, "c2", "ch1", MeasureValues.of(1, 0, 0, 5, 1)));

    /** Where the run is killed, and what it waits for there (the start of its statement). */
    enum Moment {
        /** Its windows computed, loading them into staging: a SHARE lock on the staging table stops the insert. */
        STAGING("INSERT INTO " + BatchWindowMetricsTable.STAGING_TABLE),
        /** In its one transaction, the range replaced: a FOR NO KEY UPDATE lock on its run's row stops the update. */
        FINISHING_THE_RUN("UPDATE " + BatchRunsTable.TABLE);

        final String waitingStatement;

        Moment(String waitingStatement) {
            this.waitingStatement = waitingStatement;
        }
    }

    @TempDir
    Path dir;

    BatchStack t;
    ChildBackfill child;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-29T00:00:00Z"));
        ChildBackfill.waitingForLocks(t, WAIT);
    }

    @AfterEach
    void tearDown() {
        if (child != null) child.destroy();
    }

    @ParameterizedTest
    @EnumSource(Moment.class)
    void aRangeKilledMidRunLeavesThePreviousResultAndTheNextRunReplacesIt(Moment moment) throws Exception {
        t.lake.write(List.of(E1, E2));
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        assertThat(t.batchRows()).isEqualTo(FIRST);
        t.lake.write(List.of(E3, E4));

        long runId = killRunAt(moment);

        assertThat(t.batchRows())
                .as("killed mid-run: the previous result stands")
                .isEqualTo(FIRST);
        assertThat(run(runId).status()).isEqualTo(Status.RUNNING);

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(t.batchRows()).isEqualTo(SECOND);
        assertThat(run(runId).status()).isEqualTo(Status.FAILED);
        assertThat(run(runId).error()).startsWith("abandoned: ");
        assertThat(ChildBackfill.count(t, "SELECT count(*) FROM " + BatchWindowMetricsTable.STAGING_TABLE))
                .as("no staged rows left behind")
                .isZero();
    }

    private long killRunAt(Moment moment) throws Exception {
        int day = RunLocks.dayKey(Math.floorDiv(W, 86_400_000L));
        long runId;
        try (Connection dayGate = t.admin();
                Connection gate = t.admin()) {
            advisory(dayGate, "pg_advisory_lock", day);
            child = ChildBackfill.start(t, dir.resolve("child.log"), "range", "--from", FROM, "--to", TO);
            Poll.untilPresent(
                    WAIT, "the child's run waiting for its day's lock", () -> ServerProcesses.firstWaitingFor(dayGate));
            runId = ChildBackfill.runningRun(dayGate);

            gate.setAutoCommit(false);
            try (Statement st = gate.createStatement()) {
                switch (moment) {
                    case STAGING ->
                        st.execute("LOCK TABLE " + BatchWindowMetricsTable.STAGING_TABLE + " IN SHARE MODE");
                    case FINISHING_THE_RUN ->
                        st.executeQuery("SELECT 1 FROM " + BatchRunsTable.TABLE + " WHERE run_id = " + runId
                                        + " FOR NO KEY UPDATE")
                                .close();
                }
            }
            advisory(dayGate, "pg_advisory_unlock", day);

            int backend = Poll.untilPresent(
                    WAIT, "the run to wait at " + moment, () -> ServerProcesses.firstWaitingFor(gate));
            assertThat(ChildBackfill.query(t, backend)).startsWith(moment.waitingStatement);
            if (moment == Moment.FINISHING_THE_RUN) {
                assertThat(ChildBackfill.hasWritten(t, backend))
                        .as("mid-transaction, having written")
                        .isTrue();
            }
            child.kill9(WAIT);
            // Still holding the lock the run waits for: its server process must end all the same.
            ChildBackfill.awaitSessionsEnded(t);
            gate.rollback();
        }
        assertThat(Files.readString(child.log())).doesNotContain("failed:");
        return runId;
    }

    private void advisory(Connection c, String function, int day) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + function + "(?, ?)")) {
            ps.setInt(1, RunLocks.namespace(t.schema));
            ps.setInt(2, day);
            ps.execute();
        }
    }

    private BatchRunsTable.Run run(long runId) throws Exception {
        return ChildBackfill.run(t, runId);
    }
}
