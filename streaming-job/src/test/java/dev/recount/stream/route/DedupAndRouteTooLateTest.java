package dev.recount.stream.route;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.metrics.groups.InternalOperatorMetricGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.metrics.util.InterceptingOperatorMetricGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DedupAndRouteTooLateTest {
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();
    private static final long HORIZON = SETTINGS.dedupHorizon().toMillis();

    private KeyedOneInputStreamOperatorTestHarness<String, AdEvent, AdEvent> harness;
    private DedupAndRouteTooLate function;

    /** Captures the operator's metrics, so the counters can be asserted. */
    private final InterceptingOperatorMetricGroup metrics = new InterceptingOperatorMetricGroup();

    private void open(long closedUntil) throws Exception {
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
        harness = new KeyedOneInputStreamOperatorTestHarness<>(new KeyedProcessOperator<>(function),
                e -> e.eventId, Types.STRING, environment);
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
    void idsAreForgottenOnceTheWatermarkPassesTheHorizon() throws Exception {
        open(Long.MIN_VALUE);
        feed(click("c1", W0.plusSeconds(10), 1));
        feed(click("c2", W0.plusSeconds(50), 2));
        assertThat(harness.numKeyedStateEntries()).isEqualTo(2);
        assertThat(harness.numEventTimeTimers()).isEqualTo(2);

        harness.processWatermark(new Watermark(ms(W0) + 10_000 + HORIZON));
        assertThat(harness.numKeyedStateEntries()).isEqualTo(1);

        harness.processWatermark(new Watermark(ms(W0) + 50_000 + HORIZON));
        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numEventTimeTimers()).isZero();

        // A copy arriving after its id was forgotten is too late for its window, so it cannot be counted twice.
        feed(click("c1", W0.plusSeconds(10), 3));
        assertThat(harness.extractOutputValues()).hasSize(2);
        assertThat(harness.getSideOutput(DedupAndRouteTooLate.TOO_LATE)).hasSize(1);
    }

    private void feed(AdEvent e) throws Exception {
        harness.processElement(new StreamRecord<>(e, e.eventTs));
    }
}
