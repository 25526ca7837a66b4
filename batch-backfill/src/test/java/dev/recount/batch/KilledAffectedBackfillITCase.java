package dev.recount.batch;

import static dev.recount.batch.AffectedBackfillITCase.A1;
import static dev.recount.batch.AffectedBackfillITCase.C1;
import static dev.recount.batch.AffectedBackfillITCase.LATE1;
import static dev.recount.batch.AffectedBackfillITCase.LATE2;
import static dev.recount.batch.AffectedBackfillITCase.LATE3;
import static dev.recount.batch.AffectedBackfillITCase.LATE5;
import static dev.recount.batch.AffectedBackfillITCase.row;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.ChildBackfill;
import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Status;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.Poll;
import dev.recount.testkit.ServerProcesses;
import dev.recount.testkit.Signals;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real `backfill affected` process (BackfillMain in a child JVM, its own SparkSession, as `./recount backfill
 * affected` and `correct` start it) killed with kill -9 at four moments of a run that has a waiting record to settle,
 * windows to recompute and a record to leave waiting. Each time the table, the waiting records and the consumer
 * group's offsets must be exactly as before the run, or exactly as after it; and the next run, started as users start
 * it, must end where an uninterrupted run ends.
 *
 * <p>The kill lands at a known point without guessing at timing. The test first holds the advisory lock that keeps
 * `affected` runs apart, so the child starts its run and waits there; meanwhile the test takes a lock the run's next
 * steps need, then lets the advisory lock go. The run then stops on the second lock at the moment under test, and is
 * killed there.
 */
class KilledAffectedBackfillITCase {
    static final Duration WAIT = Duration.ofSeconds(90);

    /** Where the run is killed, and what it waits for there (the start of its statement). */
    enum Moment {
        /** Its windows computed, loading them into staging: a SHARE lock on the staging table stops the insert. */
        STAGING("INSERT INTO " + BatchWindowMetricsTable.STAGING_TABLE),
        /**
         * In its one transaction, the windows replaced, keeping its pending record: a SHARE lock on backfill_waiting
         * stops the insert.
         */
        RESULTS_WRITTEN("INSERT INTO " + BackfillWaitingTable.TABLE),
        /**
         * In its one transaction, everything written but the run's own row: a FOR NO KEY UPDATE lock on that row stops
         * the update to succeeded (and lets through the key-share checks of the rows written before it).
         */
        FINISHING_THE_RUN("UPDATE " + BatchRunsTable.TABLE),
        /**
         * Its transaction committed, committing the topic's offsets: stopped as FINISHING_THE_RUN, then the Kafka
         * broker is frozen (SIGSTOP) and the run let go. It commits its results and waits for the broker's answer,
         * alive until killed. (Its request may already sit in the broker's socket: thawed, the broker may apply it.
         * The in-process test where the broker refuses the commit covers offsets left behind for certain.)
         */
        COMMITTED("UPDATE " + BatchRunsTable.TABLE);

        final String waitingStatement;

        Moment(String waitingStatement) {
            this.waitingStatement = waitingStatement;
        }
    }

    /** What a run may change: the recomputed rows, the waiting records, the group's offsets. */
    record Outputs(List<WindowRow> rows, List<String> waiting, Map<Integer, Long> offsets) {}

    static final Outputs AFTER = new Outputs(
            List.of(
                    row(AffectedBackfillITCase.W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                    row(AffectedBackfillITCase.W2, "c1", "ch1", MeasureValues.of(0, 1, 0, 7, 1)),
                    row(AffectedBackfillITCase.W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2))),
            List.of("1@1 late5: beyond the lake's completeness boundary"),
            Map.of(0, 2L, 1, 2L));

    @TempDir
    Path dir;

    BatchStack t;
    BackfillTopic topic;
    ChildBackfill child;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        topic = new BackfillTopic(t, 2);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
        ChildBackfill.waitingForLocks(t, WAIT);
    }

    @AfterEach
    void tearDown() {
        if (child != null) child.destroy();
    }

    @ParameterizedTest
    @EnumSource(Moment.class)
    void aRunKilledAtAnyMomentLosesAndDoublesNothingAndTheNextRunFinishesItsWork(Moment moment) throws Exception {
        // A first run recomputes W1 and leaves LATE3 waiting (its file is not committed yet).
        t.lake.write(List.of(A1, LATE1, C1, LATE2, LATE5));
        List<Path> inProgress = t.lake.writeInProgress(List.of(LATE3));
        topic.send(0, LATE3, LATE1);
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        // Then LATE3's file is committed and two more records arrive: the killed run is to settle LATE3, recompute W2
        // and W3, and leave LATE5 (beyond the completeness boundary) waiting.
        t.lake.commit(inProgress);
        topic.send(1, LATE2, LATE5);
        Outputs before = outputs();
        assertThat(before.waiting()).containsExactly("0@0 late3: not in the lake yet");
        assertThat(before.offsets()).containsExactly(Map.entry(0, 2L));

        long runId = killRunAt(moment);

        Outputs afterKill = outputs();
        if (moment == Moment.COMMITTED) {
            // The commit request reached the broker's socket before the kill: the broker, thawed, may still apply it.
            assertThat(afterKill)
                    .as("its results committed, its offsets before or after")
                    .isIn(new Outputs(AFTER.rows(), AFTER.waiting(), before.offsets()), AFTER);
            assertThat(run(runId).status()).isEqualTo(Status.SUCCEEDED);
        } else {
            assertThat(afterKill)
                    .as("killed mid-run: nothing it did is visible")
                    .isEqualTo(before);
            assertThat(run(runId).status()).isEqualTo(Status.RUNNING);
        }

        // The next run, as users (and `correct`) start it.
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        assertThat(outputs()).isEqualTo(AFTER);
        BatchRunsTable.Run killed = run(runId);
        if (moment == Moment.COMMITTED) {
            assertThat(killed.status())
                    .as("a run whose results committed stays succeeded")
                    .isEqualTo(Status.SUCCEEDED);
        } else {
            assertThat(killed.status()).isEqualTo(Status.FAILED);
            assertThat(killed.error()).startsWith("abandoned: ");
        }
        assertThat(count("SELECT count(*) FROM " + BatchWindowMetricsTable.STAGING_TABLE))
                .as("no staged rows left behind")
                .isZero();
        assertThat(t.lastRun().status()).isEqualTo(Status.SUCCEEDED);
    }

    /** Starts `backfill affected` in a child JVM and kills it at {@code moment}; returns its run's id. */
    private long killRunAt(Moment moment) throws Exception {
        long runId;
        try (Connection topicGate = t.admin();
                Connection gate = t.admin()) {
            try (PreparedStatement ps = topicGate.prepareStatement("SELECT pg_advisory_lock(?, ?)")) {
                ps.setInt(1, RunLocks.namespace(t.schema));
                ps.setInt(2, RunLocks.AFFECTED_KEY);
                ps.execute();
            }
            child = ChildBackfill.start(t, dir.resolve("child.log"), "affected");
            Poll.untilPresent(
                    WAIT,
                    "the child's run waiting for the backfill topic's lock",
                    () -> ServerProcesses.firstWaitingFor(topicGate));
            runId = ChildBackfill.runningRun(topicGate);

            gate.setAutoCommit(false);
            try (Statement st = gate.createStatement()) {
                switch (moment) {
                    case STAGING ->
                        st.execute("LOCK TABLE " + BatchWindowMetricsTable.STAGING_TABLE + " IN SHARE MODE");
                    case RESULTS_WRITTEN -> st.execute("LOCK TABLE " + BackfillWaitingTable.TABLE + " IN SHARE MODE");
                    case FINISHING_THE_RUN, COMMITTED ->
                        st.executeQuery("SELECT 1 FROM " + BatchRunsTable.TABLE + " WHERE run_id = " + runId
                                        + " FOR NO KEY UPDATE")
                                .close();
                }
            }
            try (PreparedStatement ps = topicGate.prepareStatement("SELECT pg_advisory_unlock(?, ?)")) {
                ps.setInt(1, RunLocks.namespace(t.schema));
                ps.setInt(2, RunLocks.AFFECTED_KEY);
                ps.execute();
            }

            int backend = Poll.untilPresent(
                    WAIT, "the run to wait at " + moment, () -> ServerProcesses.firstWaitingFor(gate));
            assertThat(ChildBackfill.query(t, backend)).startsWith(moment.waitingStatement);
            if (moment != Moment.STAGING) {
                assertThat(ChildBackfill.hasWritten(t, backend))
                        .as("mid-transaction, having written")
                        .isTrue();
                assertThat(count("SELECT count(*) FROM " + BatchWindowMetricsTable.STAGING_TABLE + " WHERE run_id = "
                                + runId))
                        .as("its windows staged")
                        .isEqualTo(2);
            }
            if (moment == Moment.COMMITTED) {
                long broker = Long.parseLong(
                        Files.readString(t.stack.home().resolve("kafka").resolve("broker.pid"))
                                .strip());
                Signals.send("STOP", broker);
                try {
                    gate.rollback(); // the run commits; its offset commit then waits for the frozen broker
                    Poll.until(
                            WAIT,
                            "the run to commit its results",
                            () -> run(runId).status() == Status.SUCCEEDED);
                    child.kill9(WAIT);
                } finally {
                    Signals.send("CONT", broker);
                }
            } else {
                child.kill9(WAIT);
            }
            // Still holding the lock the run waits for: its server process must end all the same.
            ChildBackfill.awaitSessionsEnded(t);
            gate.rollback();
        }
        assertThat(Files.readString(child.log())).doesNotContain("failed:");
        return runId;
    }

    private Outputs outputs() throws Exception {
        return new Outputs(t.batchRows(), AffectedBackfillITCase.waiting(t), topic.committed());
    }

    private BatchRunsTable.Run run(long runId) throws SQLException {
        return ChildBackfill.run(t, runId);
    }

    private long count(String sql) throws SQLException {
        return ChildBackfill.count(t, sql);
    }
}
