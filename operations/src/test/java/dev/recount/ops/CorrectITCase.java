package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowMetricsView;
import dev.recount.db.tables.WindowRow;
import dev.recount.ops.testutils.OpsStack;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.RecordingPushgateway;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code correct}: too-late events on a real backfill topic and in a real Parquet lake; the windows they name are
 * recomputed and made final, and nothing else is touched.
 */
class CorrectITCase {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);
    private static final WindowMetricsView SERVING_VIEW = new WindowMetricsView(DefaultSet.TABLES);

    private static final long HOUR = 3_600_000;
    private static final long W1 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long W2 = W1 + OpsStack.MINUTE;
    private static final long W3 = W1 + 5 * OpsStack.MINUTE;

    static final LakeEvent A1 = LakeEvent.of("a1", "impression", W1 + 1_000, "c1", "ch1", 10, 1);
    static final LakeEvent B1 = LakeEvent.of("b1", "impression", W2 + 1_000, "c1", "ch1", 30, 2);
    static final LakeEvent C1 = LakeEvent.of("c1", "impression", W3 + 1_000, "c2", "ch1", 40, 3);
    // Arrived an hour late, far beyond window.allowed-lateness: the stream sent them to the backfill topic.
    static final LakeEvent LATE1 =
            LakeEvent.of("late1", "click", W1 + 2_000, "c1", "ch1", 20, 50).receivedAfter(HOUR);
    static final LakeEvent LATE2 =
            LakeEvent.of("late2", "conversion", W3 + 2_000, "c2", "ch1", 50, 52).receivedAfter(HOUR);

    @TempDir
    Path dir;

    OpsStack t;
    BackfillTopic topic;

    @BeforeEach
    void setUp() throws Exception {
        t = new OpsStack(dir);
        topic = new BackfillTopic(t.batch, 2);
        t.batch.lakeCompleteUntil(Instant.parse("2026-11-28T12:00:00Z"));
        // What the stream counted on time.
        t.stream(W1, "c1", "ch1", DefaultSet.values(1, 0, 0, 10, 1));
        t.stream(W2, "c1", "ch1", DefaultSet.values(1, 0, 0, 30, 1));
        t.stream(W3, "c2", "ch1", DefaultSet.values(1, 0, 0, 40, 1));
        t.batch.lake.write(List.of(A1, B1, C1, LATE1, LATE2));
    }

    @Test
    void lateEventsMakeTheirWindowsFinalWithTheLateEventsCounted() throws Exception {
        topic.send(0, LATE1);
        topic.send(1, LATE2);

        // The stream missed the late events: the corrections are beyond the (zero) default tolerance.
        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());

        long affected = t.batch.lastRunOfMode(BatchRunsTable.Mode.AFFECTED).runId();
        assertThat(t.lastOut)
                .contains(
                        "2 backfill records, 2 windows recomputed",
                        "reconciling the 2 windows of batch run " + affected);
        try (Connection c = t.batch.admin()) {
            assertW1FinalWithItsLateEvent(c);
            assertThat(SERVING_VIEW.find(c, WindowKey.of(W3, "c2", "ch1")).orElseThrow())
                    .isEqualTo(new WindowMetricsView.Row(
                            row(W3, "c2", "ch1", DefaultSet.values(1, 0, 1, 90, 2)),
                            WindowMetricsView.Source.BATCH,
                            true));
            // W2 was named by no late event: neither recomputed nor reconciled.
            assertThat(SERVING_VIEW
                            .find(c, WindowKey.of(W2, "c1", "ch1"))
                            .orElseThrow()
                            .isFinal())
                    .isFalse();
        }
        assertThat(t.reconciliations())
                .singleElement()
                .satisfies(r -> assertThat(r.batchRunId()).isEqualTo(affected));

        // Nothing new on the topic: nothing recomputed, nothing reconciled.
        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.OK.code());
        assertThat(t.lastOut).contains("0 backfill records, 0 windows recomputed", "nothing new to correct");
        assertThat(t.reconciliations()).hasSize(1);

        // The same late event once more (a producer's retry): W1 is recomputed exactly as it stands, so no row is
        // written, and the run's window is still reconciled (found from what the run recorded, not from its rows).
        topic.send(0, LATE1);
        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        long again = t.batch.lastRunOfMode(BatchRunsTable.Mode.AFFECTED).runId();
        assertThat(again).isGreaterThan(affected);
        assertThat(t.lastOut)
                .contains(
                        "1 backfill records, 1 windows recomputed",
                        "0 window rows written, 1 unchanged, 0 deleted",
                        "reconciling the 1 windows of batch run " + again);
        assertThat(t.reconciliations())
                .hasSize(2)
                .last()
                .satisfies(r -> assertThat(r.batchRunId()).isEqualTo(again));
    }

    /**
     * The windows of an `affected` run that nothing reconciled (here `backfill affected` alone, as a `correct` killed
     * between its two steps leaves them: its backfill records acknowledged) are reconciled by the next `correct`,
     * although the topic names them no more; and only once.
     */
    @Test
    void windowsRecomputedButNeverReconciledAreReconciledByTheNextRun() throws Exception {
        topic.send(0, LATE1);
        topic.send(1, LATE2);
        assertThat(t.batch.backfill("affected")).as(t.batch.lastErr).isZero();
        long leftOver = t.batch.lastRunOfMode(BatchRunsTable.Mode.AFFECTED).runId();
        assertThat(t.reconciliations()).isEmpty();
        try (Connection c = t.batch.admin()) {
            assertThat(SERVING_VIEW
                            .find(c, WindowKey.of(W1, "c1", "ch1"))
                            .orElseThrow()
                            .isFinal())
                    .as("recomputed, not reconciled: still the stream's row")
                    .isFalse();
        }

        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(t.lastOut)
                .contains(
                        "reconciling the windows of batch run " + leftOver
                                + ", recomputed earlier but never reconciled",
                        "0 backfill records, 0 windows recomputed",
                        "nothing new to correct");
        assertThat(t.reconciliations())
                .singleElement()
                .satisfies(r -> assertThat(r.batchRunId()).isEqualTo(leftOver));
        try (Connection c = t.batch.admin()) {
            assertW1FinalWithItsLateEvent(c);
        }

        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.OK.code());
        assertThat(t.lastOut).doesNotContain("never reconciled");
        assertThat(t.reconciliations()).hasSize(1);
    }

    @Test
    void aRunWhileAnotherHoldsTheLockRunsNothing() throws Exception {
        topic.send(0, LATE1);
        String schema = t.batch.schema;
        try (Connection holder = t.batch.admin();
                PreparedStatement lock = holder.prepareStatement("SELECT pg_advisory_lock(?)")) {
            lock.setLong(1, CorrectLock.key(schema));
            lock.execute(); // a correct run in progress

            assertThat(t.run("correct")).isEqualTo(ExitCode.BUSY.code());
            assertThat(t.lastErr).contains("another correct run holds the lock; nothing was run");
            assertThat(t.run("correct", "--wait", "1s")).isEqualTo(ExitCode.BUSY.code());
            assertThat(t.lastErr).contains("(waited 1s)");
            assertThat(t.batch.runs()).isEmpty();
            assertThat(t.reconciliations()).isEmpty();
        }
        // The holder is gone (its session closed): the next run goes ahead.
        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(t.reconciliations()).hasSize(1);
    }

    @Test
    void aWindowWhereTheStreamRanWithAnotherSizeWaitsAndTheWindowsAroundItBecomeFinal() throws Exception {
        // A 2-minute stream row in W2 + 1m, between W1 and W3, where a late event falls too.
        LakeEvent lateInOtherSize = LakeEvent.of("late3", "click", W2 + OpsStack.MINUTE + 2_000, "c1", "ch1", 7, 53)
                .receivedAfter(HOUR);
        t.batch.lake.write(List.of(lateInOtherSize));
        try (Connection c = t.batch.admin()) {
            STREAM_TABLE.upsert(
                    c,
                    List.of(new StreamWindowMetricsTable.Row(
                            new WindowRow(
                                    WindowKey.of(W2 + OpsStack.MINUTE, "c9", "ch1"),
                                    W2 + 3 * OpsStack.MINUTE,
                                    DefaultSet.values(1, 0, 0, 1, 1)),
                            1)));
        }
        topic.send(0, LATE1, lateInOtherSize, LATE2);

        // Its window waits; W1 and W3 are recomputed and reconciled, the rows of another size between them refusing
        // neither step (both refused before: the backfill over the span, then the reconcile over the run's range).
        assertThat(t.run("correct")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(t.lastOut).contains("3 backfill records, 2 windows recomputed", "1 records pending");
        try (Connection c = t.batch.admin()) {
            assertW1FinalWithItsLateEvent(c);
            assertThat(SERVING_VIEW
                            .find(c, WindowKey.of(W3, "c2", "ch1"))
                            .orElseThrow()
                            .isFinal())
                    .isTrue();
        }
    }

    @Test
    void everyRunPushesItsOutcomeAndAFailedOneLeavesTheLastSuccessAlone() throws Exception {
        try (RecordingPushgateway pushgateway = new RecordingPushgateway()) {
            long at = BatchStack.CLOCK.instant().getEpochSecond();
            topic.send(0, LATE1);
            topic.send(1, LATE2);
            topic.sendRaw(1, "{\"not\": \"a backfill record\"}");

            assertThat(t.runWith(pushgateway.environment(), "correct"))
                    .as(t.lastErr)
                    .isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
            assertThat(pushgateway.pushes()).singleElement().satisfies(p -> {
                assertThat(p.method()).isEqualTo("POST");
                assertThat(p.path()).isEqualTo("/metrics/job/recount_correct");
                assertThat(p.body())
                        .contains(
                                "recount_correct_last_run_timestamp_seconds " + at + "\n",
                                "recount_correct_last_exit_code 3\n",
                                "recount_correct_windows_corrected 2\n",
                                "recount_correct_backfill_records_waiting 0\n",
                                "recount_correct_backfill_oldest_waiting_seconds 0\n",
                                "recount_correct_backfill_records_malformed 1\n",
                                "recount_correct_last_success_timestamp_seconds " + at + "\n");
            });

            // Retention deletes a backfill record before the next run reads it: that run, and every one after it,
            // fails (exit 5) without recording a success, which is what RecountCorrectNotCompleting watches.
            topic.send(0, LATE1, LATE1);
            topic.deleteRecordsBefore(0, 2);
            assertThat(t.runWith(pushgateway.environment(), "correct")).isEqualTo(ExitCode.FAILED.code());
            // Only correct's own outcome: the backfill it runs inside pushes nothing of its own.
            assertThat(pushgateway.pushes()).hasSize(2);
            assertThat(pushgateway.pushes().get(1).body())
                    .contains(
                            "recount_correct_last_run_timestamp_seconds " + at + "\n",
                            "recount_correct_last_exit_code " + ExitCode.FAILED.code() + "\n",
                            "recount_correct_windows_corrected 0\n")
                    .doesNotContain("last_success")
                    .as("what waits is unknown: the last values stand")
                    .doesNotContain("waiting");
            assertThat(t.lastErr).doesNotContain("pushing metrics");
        }
    }

    /** W1 served from the batch, final, with LATE1 (a click of 20) counted beside A1. */
    private static void assertW1FinalWithItsLateEvent(Connection c) throws java.sql.SQLException {
        assertThat(SERVING_VIEW.find(c, WindowKey.of(W1, "c1", "ch1")).orElseThrow())
                .isEqualTo(new WindowMetricsView.Row(
                        row(W1, "c1", "ch1", DefaultSet.values(1, 1, 0, 30, 2)), WindowMetricsView.Source.BATCH, true));
    }

    private static dev.recount.db.tables.WindowRow row(long start, String campaign, String channel, MeasureValues m) {
        return new dev.recount.db.tables.WindowRow(WindowKey.of(start, campaign, channel), start + OpsStack.MINUTE, m);
    }
}
