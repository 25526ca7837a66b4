package dev.recount.stream.route;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.metrics.groups.InternalOperatorMetricGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.metrics.util.InterceptingOperatorMetricGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DedupAndRouteTooLateTest {
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();
    private static final long HORIZON = SETTINGS.dedupHorizon().toMillis();

    private KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, AdEvent> harness;
    private DedupAndRouteTooLate function;

    /** Captures the operator's metrics, so the counters can be asserted. */
    private final InterceptingOperatorMetricGroup metrics = new InterceptingOperatorMetricGroup();

    private void open(long closedUntil) throws Exception {
        open(closedUntil, null);
    }

    /** Opens a fresh operator, restored from {@code snapshot} when one is given. */
    private void open(long closedUntil, OperatorSubtaskState snapshot) throws Exception {
        function = new DedupAndRouteTooLate(SETTINGS.windows(), SETTINGS.allowedLateness(), SETTINGS.dedupHorizon(),
                closedUntil);
        MockEnvironment environment = new MockEnvironmentBuilder()
                .setMetricGroup(new UnregisteredMetricGroups.UnregisteredTaskMetricGroup() {
                    @Override
                    public InternalOperatorMetricGroup getOrAddOperator(OperatorID id, String name,
                                                                        Map<String, String> variables) {
                        return metrics;
                    }
                })
                .build();
        harness = new KeyedOneInputStreamOperatorTestHarness<>(function,
                DedupAndRouteTooLate::idBucket, Types.INT, environment);
        if (snapshot != null) {
            harness.initializeState(snapshot);
        }
        harness.open();
    }

    private long counter(String name) {
        return ((Counter) metrics.get(name)).getCount();
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    @Test
    void duplicatesAreLetThroughOnce() throws Exception {
        open(Long.MIN_VALUE);
        AdEvent first = click("c1", W0.plusSeconds(10), 1);
        feed(first);
        feed(click("c1", W0.plusSeconds(10), 2));
        feed(click("c1", W0.plusSeconds(40), 3)); // same id, other payload: the id is the idempotency key

        assertThat(harness.extractOutputValues()).containsExactly(first);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).isNull();
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(2);
        assertThat(counter(DedupAndRouteTooLate.TOO_LATE_METRIC)).isZero();
    }

    @Test
    void anEventWithinAllowedLatenessGoesOn() throws Exception {
        open(Long.MIN_VALUE);
        harness.processWatermark(new Watermark(ms(W1) - 2 + LATENESS));
        AdEvent late = click("late", W0.plusSeconds(30), 1);
        feed(late);

        assertThat(harness.extractOutputValues()).containsExactly(late);
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
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(StreamRecord::getValue)
                .containsExactly(new BackfillRecord(tooLate, ms(W0), ms(W1), watermark, tooLate.topic, 0, 7));
        assertThat(counter(DedupAndRouteTooLate.TOO_LATE_METRIC)).isEqualTo(1);
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
    }

    /**
     * A too-late event's own time is more than a horizon behind the watermark already; remembered only from its
     * event time, it would be forgotten at the next watermark and its copy a moment later would go to the backfill
     * topic again. It is remembered for a horizon from its arrival.
     */
    @Test
    void aCopyOfATooLateEventArrivingSoonAfterItIsDropped() throws Exception {
        open(Long.MIN_VALUE);
        long watermark = ms(W0) + 3 * HORIZON; // far past W0 + lateness, and past W0 + horizon
        harness.processWatermark(new Watermark(watermark));
        AdEvent tooLate = click("deeply-late", W0.plusSeconds(30), 7);
        feed(tooLate);
        harness.processWatermark(new Watermark(watermark + HORIZON / 2));
        feed(click("deeply-late", W0.plusSeconds(30), 8));

        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(r -> r.getValue().event().offset)
                .containsExactly(7L);
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);

        harness.processWatermark(new Watermark(function.forgetAt(watermark)));
        assertThat(harness.numKeyedStateEntries()).as("forgotten a horizon after it arrived").isZero();
    }

    @Test
    void windowsClosedByAFinishedBoundedRunAreTooLateFromTheStart() throws Exception {
        open(ms(W1));
        AdEvent closed = click("closed", W0.plusSeconds(59), 1);
        AdEvent open = click("open", W1.plusSeconds(1), 2);
        feed(closed);
        feed(open);

        assertThat(harness.extractOutputValues()).containsExactly(open);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(r -> r.getValue().event())
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
        long earlyForgetAt = function.forgetAt(early.eventTs);
        assertThat(earlyForgetAt).isGreaterThanOrEqualTo(early.eventTs + HORIZON)
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
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(r -> r.getValue().event().offset)
                .as("a copy arriving after its id was forgotten is too late for its window: never counted twice")
                .containsExactly(4L);
        assertThat(harness.extractOutputValues()).containsExactly(early, later);
    }

    @Test
    void allStateAndTimersAreGoneOnceEveryHorizonHasPassed() throws Exception {
        open(Long.MIN_VALUE);
        for (int i = 0; i < 200; i++) {
            feed(click("id-" + i, W0.plusSeconds(i % 60), i));
        }
        assertThat(harness.extractOutputValues()).hasSize(200);
        assertThat(harness.numKeyedStateEntries()).isPositive();

        harness.processWatermark(new Watermark(function.forgetAt(ms(W0) + 59_000)));
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numEventTimeTimers()).isZero();
    }

    @Test
    void idsInOneBucketAndCleanupStepShareOneTimer() throws Exception {
        open(Long.MIN_VALUE);
        for (String id : idsInOneBucket(50)) {
            feed(click(id, W0.plusSeconds(10), 1));
        }
        assertThat(harness.extractOutputValues()).hasSize(50);
        assertThat(harness.numEventTimeTimers()).isEqualTo(1);
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
        feed(click("c2", W0.plusSeconds(10), 3));
        assertThat(harness.extractOutputValues()).extracting(e -> e.eventId).containsExactly("c2");
        assertThat(counter(DedupAndRouteTooLate.DUPLICATES_METRIC)).isEqualTo(1);
        harness.processWatermark(new Watermark(function.forgetAt(first.eventTs)));
        assertThat(harness.numEventTimeTimers()).as("the restored timer fired too").isZero();
        assertThat(harness.numKeyedStateEntries()).as("and forgot the restored ids").isZero();
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

        assertThat(harness.extractOutputValues()).containsExactly(current);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(StreamRecord::getValue)
                .containsExactly(new BackfillRecord(replayed, ms(W0), ms(W1), watermark, replayed.topic, 0, 5));
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
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).extracting(r -> r.getValue().watermark())
                .containsExactly(later);
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

    private void feed(AdEvent e) throws Exception {
        harness.processElement(new StreamRecord<>(e, e.eventTs));
    }
}
