package dev.recount.stream.route;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.defaultValues;
import static dev.recount.stream.Fixtures.ms;
import static dev.recount.stream.Fixtures.withAttributes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.stream.Fixtures;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.testutils.CapturingMetricGroup;
import dev.recount.stream.window.SetPartial;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.metrics.groups.InternalOperatorMetricGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFinalizer;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DedupAndRouteTooLateTest {
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();
    private static final long HORIZON = SETTINGS.dedupHorizon().toMillis();

    private static final JobSets DEFAULT_ONLY = Fixtures.jobSets(Fixtures.DEFAULT_ONLY);
    private static final JobSets THREE_SETS = Fixtures.jobSets(Fixtures.THREE_SETS);
    private static final long MINUTE = 60_000;

    private KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, SetPartial> harness;
    private DedupAndRouteTooLate function;

    /** Captures the operator's metrics (and its sets' ones), so the counters can be asserted. */
    private CapturingMetricGroup metrics = new CapturingMetricGroup();

    private void open(long closedUntil) throws Exception {
        open(closedUntil, null);
    }

    /** Opens a fresh operator of the default set, restored from {@code snapshot} when one is given. */
    private void open(long closedUntil, OperatorSubtaskState snapshot) throws Exception {
        open(DEFAULT_ONLY, closedUntil, snapshot);
    }

    /** Opens a fresh operator computing {@code sets}, restored from {@code snapshot} when one is given. */
    private void open(JobSets sets, long closedUntil, OperatorSubtaskState snapshot) throws Exception {
        metrics = new CapturingMetricGroup();
        function = new DedupAndRouteTooLate(
                sets, SETTINGS.withWindowSize(sets.longestWindow()).dedupHorizon(), closedUntil, false);
        MockEnvironment environment = new MockEnvironmentBuilder()
                .setMetricGroup(new UnregisteredMetricGroups.UnregisteredTaskMetricGroup() {
                    @Override
                    public InternalOperatorMetricGroup getOrAddOperator(
                            OperatorID id, String name, Map<String, String> variables) {
                        return metrics;
                    }
                })
                .build();
        harness = new KeyedOneInputStreamOperatorTestHarness<>(
                function, DedupAndRouteTooLate::idBucket, Types.INT, environment);
        if (snapshot != null) {
            harness.initializeState(snapshot);
        }
        harness.open();
    }

    private long counter(String name) {
        return metrics.count(name);
    }

    @SuppressWarnings("unchecked")
    private long gauge(String name) {
        return ((Gauge<Long>) metrics.get(name)).getValue();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (harness != null) harness.close();
    }

    @Test
    void duplicatesAreLetThroughOnce() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent first = click("c1", W0.plusSeconds(10), 1);
        feed(first);
        feed(click("c1", W0.plusSeconds(10), 2));
        feed(click("c1", W0.plusSeconds(40), 3)); // same id, other payload: the id is the idempotency key
        assertThat(harness.extractOutputValues())
                .as("on time: buffered until its window fires")
                .isEmpty();

        harness.processWatermark(new Watermark(ms(W1) - 1));
        assertThat(harness.extractOutputValues()).containsExactly(sumOf(first));
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).isNull();
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(2);
        assertThat(counter(DedupAndRouteTooLate.TOO_LATE_METRIC)).isZero();
    }

    @Test
    void anEventWithinAllowedLatenessGoesOnAtOnceOnItsOwn() throws Exception {
        open(Long.MIN_VALUE);
        harness.processWatermark(new Watermark(ms(W1) - 2 + LATENESS));
        AdEvent late = click("late", W0.plusSeconds(30), 1);
        AdEvent late2 = click("late-2", W0.plusSeconds(31), 2);
        feed(late);
        feed(late2);

        // One partial per event, each carrying its event: each re-fires the window (revision + 1).
        assertThat(harness.extractOutputValues()).containsExactly(single(late), single(late2));
    }

    @Test
    void goingIdleSendsEveryBufferedSumAndStaysActiveDownstream() throws Exception {
        // Quiet inputs: the buffered sums leave at once (found by StreamJobITCase, whose partitions all go quiet
        // between its phases), but the idle status does not: idle downstream, this operator would be left out of the
        // window operator's watermark, which could then pass windows this one still finds on time (the fault
        // suite's broker restart lost 10 events that way).
        open(Long.MIN_VALUE);
        AdEvent a = click("a", W0.plusSeconds(1), 1);
        AdEvent other = click("other", W1.plusSeconds(1), 2);
        feed(a);
        feed(other);
        harness.processWatermark(new Watermark(ms(W0) + 5_000));
        assertThat(harness.extractOutputValues()).isEmpty();

        harness.processWatermarkStatus(WatermarkStatus.IDLE);
        assertThat(harness.extractOutputValues()).containsExactlyInAnyOrder(sumOf(a), sumOf(other));
        harness.processWatermarkStatus(WatermarkStatus.ACTIVE);
        assertThat(new ArrayList<Object>(harness.getOutput()))
                .as("no watermark status leaves this operator")
                .noneMatch(e -> e instanceof WatermarkStatus);
    }

    @Test
    void aWindowsSumsLeaveBeforeTheWatermarkThatFiresIt() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent a = click("a", W0.plusSeconds(1), 1);
        AdEvent b = click("b", W0.plusSeconds(30), 2);
        AdEvent other = click("other", W1.plusSeconds(1), 3);
        feed(a);
        feed(b);
        feed(other);
        harness.processWatermark(new Watermark(ms(W1) - 2));
        assertThat(harness.extractOutputValues()).isEmpty();

        harness.processWatermark(new Watermark(ms(W1) - 1));
        List<Object> output = new ArrayList<>(harness.getOutput());
        assertThat(output).hasSize(3); // the sum, then the watermark (after the one that fired nothing)
        assertThat(output.get(1)).isEqualTo(new StreamRecord<>(sumOf(a, b), ms(W1) - 1));
        assertThat(output.get(2)).isEqualTo(new Watermark(ms(W1) - 1));

        harness.processWatermark(new Watermark(Long.MAX_VALUE));
        assertThat(harness.extractOutputValues()).containsExactly(sumOf(a, b), sumOf(other));
    }

    @Test
    void bufferedSumsArePartOfTheSnapshot() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent a = click("a", W0.plusSeconds(1), 1);
        feed(a);
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(Long.MIN_VALUE, snapshot);
        AdEvent b = click("b", W0.plusSeconds(2), 2);
        feed(b);
        harness.processWatermark(new Watermark(ms(W1) - 1));
        assertThat(harness.extractOutputValues()).containsExactly(sumOf(a, b));
    }

    @Test
    void beyondItsSizeTheBufferEmptiesEarly() throws Exception {
        open(Long.MIN_VALUE);
        for (int i = 0; i <= DedupAndRouteTooLate.MAX_BUFFERED_SUMS; i++) {
            feed(Fixtures.event(
                    "k-" + i, dev.recount.core.event.EventType.CLICK, W0.plusSeconds(1), "camp-" + i, "web", 1, i));
        }
        assertThat(harness.extractOutputValues())
                .hasSize(DedupAndRouteTooLate.MAX_BUFFERED_SUMS + 1)
                .allSatisfy(p -> assertThat(events(p)).isEqualTo(1));
    }

    @Test
    void aTooLateEventGoesToTheSideOutputWithItsWindowAndTheWatermark() throws Exception {
        open(Long.MIN_VALUE);
        long watermark = ms(W1) - 1 + LATENESS;
        harness.processWatermark(new Watermark(watermark));
        AdEvent tooLate = click("too-late", W0.plusSeconds(30), 7);
        feed(tooLate);
        feed(click("too-late", W0.plusSeconds(30), 8)); // its duplicate is dropped, not backfilled twice

        assertThat(harness.extractOutputValues()).isEmpty();
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(StreamRecord::getValue)
                .containsExactly(backfill(tooLate, watermark, new SetWindow(MetricSet.DEFAULT, ms(W0), ms(W1))));
        assertThat(counter(DedupAndRouteTooLate.TOO_LATE_METRIC)).isEqualTo(1);
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
    }

    /** Its event time lies far behind the watermark: remembered from the watermark on, not forgotten at the next one. */
    @Test
    void aCopyOfATooLateEventSentAfterMoreWatermarksIsStillDropped() throws Exception {
        open(Long.MIN_VALUE);
        long watermark = ms(W1) + 10 * 60_000; // W0 is ten minutes behind: far beyond its lateness and the horizon
        harness.processWatermark(new Watermark(watermark));
        AdEvent tooLate = click("far-behind", W0.plusSeconds(30), 7);
        feed(tooLate);
        harness.processWatermark(new Watermark(watermark + 1_000));
        harness.processWatermark(new Watermark(watermark + 2_000));
        feed(click("far-behind", W0.plusSeconds(30), 8));

        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(r -> r.getValue().event().offset)
                .containsExactly(7L);
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
    }

    @Test
    void windowsClosedByAFinishedBoundedRunAreTooLateFromTheStart() throws Exception {
        open(ms(W1));
        AdEvent closed = click("closed", W0.plusSeconds(59), 1);
        AdEvent open = click("open", W1.plusSeconds(1), 2);
        feed(closed);
        feed(open);
        harness.processWatermark(new Watermark(Long.MAX_VALUE));

        // With lateness = one window, the floor (closedUntil - 1 + lateness) has passed W1's end too: "open" is
        // within lateness of a window the floor treats as fired, so it goes on at once, on its own.
        assertThat(harness.extractOutputValues()).containsExactly(single(open));
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(r -> r.getValue().event())
                .containsExactly(closed);
    }

    @Test
    void anIdIsRememberedUntilTheWatermarkPassesItsHorizonWhateverElseSharesItsBucket() throws Exception {
        open(Long.MIN_VALUE);
        List<String> ids = idsInOneBucket(2);
        AdEvent early = click(ids.get(0), W0.plusSeconds(10), 1);
        Instant laterTime = W0.plusSeconds(10 + HORIZON / 2 / 1000);
        AdEvent later = click(ids.get(1), laterTime, 2);
        feed(early);
        feed(later);
        long earlyForgetAt = function.forgetAt(function.rememberedFrom(early, Long.MIN_VALUE));
        assertThat(earlyForgetAt)
                .isGreaterThanOrEqualTo(early.eventTs + HORIZON)
                .isLessThan(early.eventTs + HORIZON + HORIZON / 8 + 1_000);

        // One tick before: the copy is still known (and dropped, although it is too late by now).
        harness.processWatermark(new Watermark(earlyForgetAt - 1));
        feed(click(ids.get(0), W0.plusSeconds(10), 3));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).isNull();

        // At its horizon the early id is forgotten, the later one in the same bucket is not.
        harness.processWatermark(new Watermark(earlyForgetAt));
        feed(click(ids.get(0), W0.plusSeconds(10), 4));
        feed(click(ids.get(1), laterTime, 5));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(2);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(r -> r.getValue().event().offset)
                .as("a copy arriving after its id was forgotten is too late for its window: never counted twice")
                .containsExactly(4L);
        assertThat(events(harness.extractOutputValues())).isEqualTo(2); // early and later, once each
    }

    /**
     * The watermark waits for a lagging partition while an event with a long delay is read and counted; then the
     * partition catches up and the watermark jumps past the event's time plus the horizon at once. A copy the
     * producer sent a few seconds after the first is still dropped: ids are remembered from their send time too,
     * so the copy does not go to the backfill topic while the row counts the first.
     */
    @Test
    void aCopySentSoonAfterIsDroppedEvenWhenTheWatermarkJumpsPastTheEventsHorizon() throws Exception {
        open(Long.MIN_VALUE);
        long delayed = ms(W1) + 50_000; // sent 50 s after its event time
        AdEvent first = withRecordTs(click("slow", W1, 1), delayed);
        harness.processWatermark(new Watermark(ms(W1) + 10_000)); // held back by the lagging partition
        feed(first);
        long jumped = ms(W1) + HORIZON + 30_000; // past event time + horizon, not past send time + horizon
        harness.processWatermark(new Watermark(jumped));
        feed(withRecordTs(click("slow", W1, 2), delayed + 5_000));

        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .as("nothing to the backfill topic")
                .isNull();
        assertThat(events(harness.extractOutputValues())).isEqualTo(1);

        // Once the watermark passes the send time plus the horizon, the id is forgotten as before.
        harness.processWatermark(new Watermark(function.forgetAt(delayed)));
        assertThat(harness.numKeyedStateEntries()).isZero();
    }

    /**
     * Old events replayed with new record timestamps (produce's default): the record time extends an id's memory by
     * at most a bounded number of horizons past its event time, so a long replay does not keep every id until it ends.
     */
    @Test
    void aReplayedEventsRecordTimeExtendsItsMemoryOnlyBoundedly() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent replayed = withRecordTs(click("replayed", W0, 1), ms(W0) + 3 * 24 * 3_600_000L); // sent 3 days later
        feed(replayed);
        long bound = ms(W0) + DedupAndRouteTooLate.RECORD_TIME_SLACK_HORIZONS * HORIZON;
        assertThat(function.rememberedFrom(replayed, Long.MIN_VALUE)).isEqualTo(bound);

        harness.processWatermark(new Watermark(function.forgetAt(bound)));
        assertThat(harness.numKeyedStateEntries())
                .as("forgotten long before the replay's record time")
                .isZero();
    }

    @Test
    void allStateAndTimersAreGoneOnceEveryHorizonHasPassed() throws Exception {
        open(Long.MIN_VALUE);
        for (int i = 0; i < 200; i++) {
            feed(click("id-" + i, W0.plusSeconds(i % 60), i));
        }
        assertThat(harness.numKeyedStateEntries()).isPositive();

        harness.processWatermark(new Watermark(function.forgetAt(ms(W0) + 59_000 + 1_000))); // the last record time
        assertThat(events(harness.extractOutputValues())).isEqualTo(200);
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numEventTimeTimers()).isZero();
    }

    @Test
    void idsInManyBucketsAreForgottenByTheWatermarkWithoutATimerEach() throws Exception {
        open(Long.MIN_VALUE);
        List<AdEvent> early = new ArrayList<>();
        for (int i = 0; i < 300; i++) early.add(click("early-" + i, W0.plusSeconds(10), i));
        AdEvent late = click("late", W0.plusSeconds(10 + HORIZON / 1000), 300);
        for (AdEvent e : early) feed(e);
        feed(late);
        assertThat(harness.numKeyedStateEntries()).as("buckets holding ids").isGreaterThan(200);
        assertThat(harness.numEventTimeTimers()).isZero();

        long earlyForgetAt = function.forgetAt(function.rememberedFrom(early.get(0), Long.MIN_VALUE));
        harness.processWatermark(new Watermark(earlyForgetAt - 1));
        assertThat(harness.numKeyedStateEntries()).as("nothing due yet").isGreaterThan(200);
        harness.processWatermark(new Watermark(earlyForgetAt));
        assertThat(harness.numKeyedStateEntries())
                .as("only the bucket of the id due later is left")
                .isEqualTo(1);
        feed(click("early-7", W0.plusSeconds(10), 301)); // forgotten: too late now, to the backfill topic
        feed(click("late", W0.plusSeconds(10 + HORIZON / 1000), 302)); // remembered: a copy
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(r -> r.getValue().event().offset)
                .containsExactly(301L);
    }

    @Test
    void theRememberedIdsGaugeCountsLiveIdsAndIsRecountedAfterARestore() throws Exception {
        open(Long.MIN_VALUE);
        List<AdEvent> early = new ArrayList<>();
        for (int i = 0; i < 50; i++) early.add(click("early-" + i, W0.plusSeconds(10), i));
        for (AdEvent e : early) feed(e);
        feed(click("early-3", W0.plusSeconds(10), 50)); // a copy: nothing new to remember
        feed(click("late", W0.plusSeconds(10 + HORIZON / 1000), 51));
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC)).isEqualTo(51);

        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();
        open(Long.MIN_VALUE, snapshot);
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC))
                .as("not known before the first sweep")
                .isZero();
        harness.processWatermark(new Watermark(ms(W0)));
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC))
                .as("the first watermark after a restore recounts")
                .isEqualTo(51);

        long earlyForgetAt = function.forgetAt(function.rememberedFrom(early.get(0), Long.MIN_VALUE));
        harness.processWatermark(new Watermark(earlyForgetAt));
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC)).isEqualTo(1);
        feed(click("new", W0.plusSeconds(10 + HORIZON / 1000), 52));
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC)).isEqualTo(2);
    }

    @Test
    void rememberedIdsSurviveARestoreFromACheckpoint() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent first = click("c1", W0.plusSeconds(10), 1);
        feed(first);
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(Long.MIN_VALUE, snapshot);
        feed(click("c1", W0.plusSeconds(10), 2));
        AdEvent second = click("c2", W0.plusSeconds(10), 3);
        feed(second);
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        harness.processWatermark(new Watermark(ms(W1) - 1));
        assertThat(harness.extractOutputValues())
                .as("the sum restored with the snapshot, plus c2")
                .containsExactly(sumOf(first, second));
        harness.processWatermark(new Watermark(function.forgetAt(first.recordTs)));
        assertThat(harness.numKeyedStateEntries())
                .as("the restored ids are forgotten at their time too")
                .isZero();
    }

    /**
     * On a TaskManager a checkpoint's state is written after the task has moved on (the heap backend's asynchronous
     * part), while the operator changes its buckets' tables in place. The checkpoint must hold the ids of its own
     * moment: an id that arrived while it was written, in the same bucket as one before it, is not in it (else a
     * restore would drop that id's replayed event as a copy: lost), and the one before it is (else its replayed copy
     * would be counted twice). The asynchronous part runs here by hand, after the later events.
     */
    @Test
    void aCheckpointHoldsTheIdsOfItsMomentWhileTheOperatorGoesOnChangingTheSameTable() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent before = click("c1", W0.plusSeconds(10), 1);
        feed(before);
        OperatorSnapshotFutures inFlight = harness.getOperator()
                .snapshotState(
                        1L,
                        1L,
                        CheckpointOptions.forCheckpointWithDefaultLocation(),
                        new MemCheckpointStreamFactory(16 << 20));
        List<AdEvent> after = new ArrayList<>();
        for (int i = 0; after.size() < 3; i++) {
            AdEvent e = click("later-" + i, W0.plusSeconds(20), 10 + i);
            if (DedupAndRouteTooLate.idBucket(e).equals(DedupAndRouteTooLate.idBucket(before))) after.add(e);
        }
        for (AdEvent e : after) feed(e);
        feed(click("c1", W0.plusSeconds(10), 2));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        OperatorSubtaskState snapshot =
                OperatorSnapshotFinalizer.create(inFlight).getJobManagerOwnedState();
        harness.close();

        open(Long.MIN_VALUE, snapshot);
        feed(click("c1", W0.plusSeconds(10), 3));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC))
                .as("the id from before the checkpoint is in it")
                .isEqualTo(1);
        for (AdEvent e : after) feed(click(e.eventId, W0.plusSeconds(20), e.offset + 100));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC))
                .as("the ids that arrived while it was written are not")
                .isEqualTo(1);
        for (AdEvent e : after) feed(click(e.eventId, W0.plusSeconds(20), e.offset + 200));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC))
                .as("and are remembered once seen again after the restore")
                .isEqualTo(1 + after.size());
    }

    /**
     * A checkpoint of the version that forgot ids by a cleanup timer per bucket and due time: today's operator
     * restores its ids (copies are still dropped), and its timers fire and find their service instead of failing the
     * restore or staying behind.
     */
    @Test
    void aCheckpointWithThePreviousVersionsCleanupTimersIsRestoredAndItsTimersFire() throws Exception {
        TimerVersionDedup previous = new TimerVersionDedup(
                new DedupAndRouteTooLate(DEFAULT_ONLY, SETTINGS.dedupHorizon(), Long.MIN_VALUE, false));
        List<AdEvent> events = new ArrayList<>();
        for (int i = 0; i < 40; i++) events.add(click("old-" + i, W0.plusSeconds(i), i));
        AdEvent later = click("later", W0.plusSeconds(10 + HORIZON / 1000), 40);
        events.add(later);
        OperatorSubtaskState snapshot;
        try (KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, SetPartial> old =
                new KeyedOneInputStreamOperatorTestHarness<>(previous, DedupAndRouteTooLate::idBucket, Types.INT)) {
            old.open();
            for (AdEvent e : events) old.processElement(new StreamRecord<>(e, e.eventTs));
            assertThat(old.numEventTimeTimers())
                    .as("a timer per bucket and due time")
                    .isGreaterThan(30);
            snapshot = old.snapshot(1L, 1L);
        }

        open(Long.MIN_VALUE, snapshot);
        int restoredTimers = harness.numEventTimeTimers();
        assertThat(restoredTimers)
                .as("the old timers came back with the checkpoint")
                .isGreaterThan(30);
        feed(click("old-7", W0.plusSeconds(7), 100));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC))
                .as("restored ids still catch copies")
                .isEqualTo(1);

        long lastEarlyForgetAt = function.forgetAt(function.rememberedFrom(events.get(39), Long.MIN_VALUE));
        assertThat(function.forgetAt(function.rememberedFrom(later, Long.MIN_VALUE)))
                .isGreaterThan(lastEarlyForgetAt);
        harness.processWatermark(new Watermark(lastEarlyForgetAt));
        assertThat(harness.numEventTimeTimers())
                .as("every timer due by then fired; the later id's is left")
                .isEqualTo(1);
        assertThat(harness.numKeyedStateEntries())
                .as("only the later id's bucket is left")
                .isEqualTo(1);
        assertThat(gauge(DedupAndRouteTooLate.REMEMBERED_IDS_METRIC)).isEqualTo(1);

        harness.processWatermark(new Watermark(Long.MAX_VALUE));
        assertThat(harness.numEventTimeTimers()).isZero();
        assertThat(harness.numKeyedStateEntries()).isZero();
    }

    /**
     * Flink does not checkpoint watermarks: restored, the operator receives none until the sources emit again. A
     * window closed (and purged downstream) before the checkpoint must stay closed: its replayed events are too
     * late, not the first events of a re-opened window.
     */
    @Test
    void aRestoredOperatorJudgesLatenessAgainstTheWatermarkOfItsCheckpoint() throws Exception {
        open(Long.MIN_VALUE);
        long watermark = ms(W1) - 1 + LATENESS; // W0 is closed: its last millisecond + lateness has passed
        harness.processWatermark(new Watermark(watermark));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(Long.MIN_VALUE, snapshot);
        AdEvent replayed = click("replayed", W0.plusSeconds(30), 5);
        AdEvent current = click("current", W1.plusSeconds(30), 6);
        feed(replayed);
        feed(current);
        harness.processWatermark(new Watermark(Long.MAX_VALUE));

        assertThat(harness.extractOutputValues()).containsExactly(single(current));
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(StreamRecord::getValue)
                .containsExactly(backfill(replayed, watermark, new SetWindow(MetricSet.DEFAULT, ms(W0), ms(W1))));
    }

    @Test
    void theFloorOfARestoreIsCarriedIntoTheNextSnapshotAndRisesWithTheWatermark() throws Exception {
        open(Long.MIN_VALUE);
        harness.processWatermark(new Watermark(ms(W1) - 1 + LATENESS));
        OperatorSubtaskState first = harness.snapshot(1L, 1L);
        harness.close();

        // Restored and snapshotted again before any watermark arrived: the floor must not be lost.
        open(Long.MIN_VALUE, first);
        OperatorSubtaskState second = harness.snapshot(2L, 2L);
        harness.close();
        open(Long.MIN_VALUE, second);
        feed(click("still-closed", W0.plusSeconds(1), 1));
        assertThat(harness.extractOutputValues()).isEmpty();

        long later = ms(W1) + 59_999 + LATENESS; // closes W1 too
        harness.processWatermark(new Watermark(later));
        OperatorSubtaskState third = harness.snapshot(3L, 3L);
        harness.close();
        open(Long.MIN_VALUE, third);
        feed(click("w1-replayed", W1.plusSeconds(1), 2));
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(r -> r.getValue().watermark())
                .containsExactly(later);
    }

    /**
     * Three sets: the default set and channel_country with 1 min windows, campaign_slot with 5 min ones. At a watermark
     * that has closed W0's 1 min windows but not fired the 5 min one, an event of W0 is too late for two sets and on
     * time for the third: one backfill record names the two sets with their windows, the third counts it.
     */
    @Test
    void anEventTooLateForSomeSetsGoesToTheBackfillTopicOnceNamingThoseSetsAndCountsInTheOthers() throws Exception {
        open(THREE_SETS, Long.MIN_VALUE, null);
        long watermark = ms(W1) - 1 + LATENESS;
        harness.processWatermark(new Watermark(watermark));
        AdEvent mixed = withAttributes(click("mixed", W0.plusSeconds(30), 1), "top", "DE", 4);
        feed(mixed);

        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(StreamRecord::getValue)
                .containsExactly(backfill(
                        mixed,
                        watermark,
                        new SetWindow(MetricSet.DEFAULT, ms(W0), ms(W1)),
                        new SetWindow("channel_country", ms(W0), ms(W1))));
        assertThat(harness.extractOutputValues())
                .as("campaign_slot's window has not fired: buffered")
                .isEmpty();
        harness.processWatermark(new Watermark(ms(W0) + 5 * MINUTE - 1));
        assertThat(harness.extractOutputValues())
                .singleElement()
                .satisfies(p -> assertThat(p.set).isEqualTo("campaign_slot"))
                .satisfies(p -> assertThat(p.dimensions).containsExactly("camp-a", "top"))
                .satisfies(p -> assertThat(values(p)).isEqualTo(MeasureValues.of(0, 250_000, 1)));

        // Later, past the 5 min window's lateness too: too late for every set, still one record.
        long later = ms(W0) + 5 * MINUTE - 1 + LATENESS;
        harness.processWatermark(new Watermark(later));
        AdEvent tooLateForAll = withAttributes(click("all", W0.plusSeconds(31), 2), "top", "DE", 4);
        feed(tooLateForAll);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .extracting(StreamRecord::getValue)
                .endsWith(backfill(
                        tooLateForAll,
                        later,
                        new SetWindow(MetricSet.DEFAULT, ms(W0), ms(W1)),
                        new SetWindow("campaign_slot", ms(W0), ms(W0) + 5 * MINUTE),
                        new SetWindow("channel_country", ms(W0), ms(W1))));

        assertThat(counter(DedupAndRouteTooLate.TOO_LATE_METRIC))
                .as("events, once each")
                .isEqualTo(2);
        assertThat(metrics.count("metric_set", MetricSet.DEFAULT, DedupAndRouteTooLate.TOO_LATE_METRIC))
                .isEqualTo(2);
        assertThat(metrics.count("metric_set", "channel_country", DedupAndRouteTooLate.TOO_LATE_METRIC))
                .isEqualTo(2);
        assertThat(metrics.count("metric_set", "campaign_slot", DedupAndRouteTooLate.TOO_LATE_METRIC))
                .isEqualTo(1);
    }

    /**
     * Two sets added to the definitions of a running deployment (restored from its checkpoint): each counts from its
     * first window boundary after everything read before the checkpoint (the latest event time, beyond the watermark),
     * so its first window holds all of its events; earlier events are neither counted nor sent to the backfill topic
     * for it. The start is part of the next checkpoint.
     */
    @Test
    void aSetAddedOnRestoreCountsFromItsFirstWindowAfterWhatWasReadBeforeTheCheckpoint() throws Exception {
        open(DEFAULT_ONLY, Long.MIN_VALUE, null);
        feed(withAttributes(click("a", W0.plusSeconds(10), 1), "top", "DE", 1));
        feed(withAttributes(click("b", W1.plusSeconds(30), 2), "top", "DE", 1)); // read ahead of the watermark
        harness.processWatermark(new Watermark(ms(W0) + 20_000));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(THREE_SETS, Long.MIN_VALUE, snapshot);
        long w5 = ms(W0) + 5 * MINUTE;
        assertThat(function.setStart(0)).as("the default set counts on").isEqualTo(Long.MIN_VALUE);
        assertThat(function.setStart(1))
                .as("campaign_slot: after W1 + 30 s, 5 min windows")
                .isEqualTo(w5);
        assertThat(function.setStart(2))
                .as("channel_country: after W1 + 30 s, 1 min windows")
                .isEqualTo(ms(W2));

        feed(withAttributes(click("c", W1.plusSeconds(40), 3), "top", "DE", 1));
        feed(withAttributes(click("d", W2.plusSeconds(5), 4), "top", "DE", 1));
        feed(withAttributes(click("f", Instant.ofEpochMilli(w5 + 1_000), 5), "top", "DE", 1));
        harness.processWatermark(new Watermark(Long.MAX_VALUE));

        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE))
                .as("nothing backfilled for them")
                .isNull();
        assertThat(harness.extractOutputValues())
                .extracting(p -> p.set + "@" + (p.windowStart - ms(W0)) / MINUTE + "=" + events(p))
                .containsExactlyInAnyOrder(
                        "default@0=1",
                        "default@1=2",
                        "default@2=1",
                        "default@5=1",
                        "channel_country@2=1",
                        "channel_country@5=1",
                        "campaign_slot@5=1");

        OperatorSubtaskState again = harness.snapshot(2L, 2L);
        harness.close();
        open(THREE_SETS, Long.MIN_VALUE, again);
        assertThat(function.setStart(1)).as("kept in the checkpoint").isEqualTo(w5);
        assertThat(function.setStart(2)).isEqualTo(ms(W2));
    }

    @Test
    void aSetRemovedOnRestoreLeavesItsBufferedSumsBehind() throws Exception {
        open(THREE_SETS, Long.MIN_VALUE, null);
        feed(withAttributes(click("a", W0.plusSeconds(10), 1), "top", "DE", 1));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(DEFAULT_ONLY, Long.MIN_VALUE, snapshot);
        harness.processWatermark(new Watermark(Long.MAX_VALUE));
        assertThat(harness.extractOutputValues()).extracting(p -> p.set).containsExactly(MetricSet.DEFAULT);
    }

    /**
     * A checkpoint of the release before metric sets (written by that release's own de-dup operator, see
     * src/test/resources/previous-release): at watermark W0 + 10 s it remembered six ids and buffered the sums of W0
     * (camp-a/search: an impression of 1,000 and a click of 250,000; camp-b/video: three conversions of 2^63 - 1) and of
     * W1 (camp-a/search: an impression). Restored with three sets: copies are still dropped, the sums are the default
     * set's, the floor is kept, and the two other sets start after it.
     */
    @Test
    void aCheckpointOfThePreviousReleaseRestoresItsIdsFloorAndBufferedSumsAsTheDefaultSets() throws Exception {
        open(
                THREE_SETS,
                Long.MIN_VALUE,
                OperatorSnapshotUtil.readStateHandle(previousRelease("dedup-by-id-digest.snapshot")));
        assertThat(gauge(DedupAndRouteTooLate.WATERMARK_FLOOR_METRIC)).isEqualTo(ms(W0) + 10_000);
        assertThat(function.setStart(0)).isEqualTo(Long.MIN_VALUE);
        assertThat(function.setStart(1)).isEqualTo(ms(W0) + 5 * MINUTE);
        assertThat(function.setStart(2)).isEqualTo(ms(W1));

        feed(withAttributes(click("c1", W0.plusSeconds(2), 20), "none", "other", 0));
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC))
                .as("a restored id")
                .isEqualTo(1);
        feed(withAttributes(click("c2", W0.plusSeconds(20), 21), "none", "other", 0));
        harness.processWatermark(new Watermark(ms(W1) - 1));

        BigInteger threeMax = BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(3));
        assertThat(harness.extractOutputValues())
                .extracting(p -> p.set + " " + String.join("/", p.dimensions) + " " + values(p))
                .containsExactlyInAnyOrder(
                        "default camp-a/search " + defaultValues(1, 2, 0, 501_000, 3),
                        "default camp-b/video " + defaultValues(0, 0, 3, threeMax, 3));
        harness.processWatermark(new Watermark(ms(W2) - 1));
        assertThat(harness.extractOutputValues())
                .extracting(p -> p.set + " " + (p.windowStart - ms(W0)) / MINUTE + " " + values(p))
                .endsWith("default 1 " + defaultValues(1, 0, 0, 1_000, 1));
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).isNull();
    }

    @Test
    void theHorizonMustCoverTheLongestWindowOfAnySet() {
        assertThatThrownBy(() -> new DedupAndRouteTooLate(THREE_SETS, Duration.ofMinutes(4), Long.MIN_VALUE, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("longest window");
    }

    static String previousRelease(String file) {
        return DedupAndRouteTooLateTest.class
                .getResource("/previous-release/" + file)
                .getPath();
    }

    private static MeasureValues values(SetPartial p) {
        return THREE_SETS.byName(p.set).set().values(p.sums);
    }

    /** Distinct ids that hash to one bucket (the first bucket that collects {@code n}). */
    private static List<String> idsInOneBucket(int n) {
        Map<Integer, List<String>> byBucket = new HashMap<>();
        for (int i = 0; ; i++) {
            AdEvent e = click("evt-" + i, W0, 0);
            List<String> ids = byBucket.computeIfAbsent(DedupAndRouteTooLate.idBucket(e), b -> new ArrayList<>());
            ids.add(e.eventId);
            if (ids.size() == n) {
                return ids;
            }
        }
    }

    private static AdEvent withRecordTs(AdEvent e, long recordTs) {
        e.recordTs = recordTs;
        return e;
    }

    private void feed(AdEvent e) throws Exception {
        harness.processElement(new StreamRecord<>(e, e.eventTs));
    }

    /** The buffered sum of {@code events} in the default set (one window key, one window), as the operator sends it. */
    private static SetPartial sumOf(AdEvent... events) {
        SetRules rules = DEFAULT_ONLY.defaultSet();
        MetricSet set = rules.set();
        var sums = set.newSums();
        for (AdEvent e : events) set.add(sums, e);
        AdEvent first = events[0];
        return new SetPartial(
                set.name(), rules.time().windowStart(first.eventTs), set.dimensionValues(first), sums, null);
    }

    /** An event of the default set sent on at once, a partial of its own. */
    private static SetPartial single(AdEvent e) {
        return single(DEFAULT_ONLY.defaultSet(), e);
    }

    private static SetPartial single(SetRules rules, AdEvent e) {
        MetricSet set = rules.set();
        return new SetPartial(
                set.name(), rules.time().windowStart(e.eventTs), set.dimensionValues(e), set.add(set.newSums(), e), e);
    }

    private static BackfillRecord backfill(AdEvent e, long watermark, SetWindow... sets) {
        return new BackfillRecord(e, List.of(sets), watermark, e.topic, e.partition, e.offset);
    }

    /** How many events the partials hold (their measure {@code events}). */
    private static long events(List<SetPartial> partials) {
        return partials.stream().mapToLong(DedupAndRouteTooLateTest::events).sum();
    }

    private static long events(SetPartial p) {
        return p.sums.sums[THREE_SETS.byName(p.set).set().eventsIndex()];
    }
}
