package dev.recount.stream.window;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.impression;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.Fixtures;
import dev.recount.stream.StreamJob;
import java.math.BigInteger;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The window stage exactly as the job builds it ({@link StreamJob#windowMetrics}), driven by a harness: elements and
 * watermarks in, rows and late events out.
 */
class WindowMetricsTest {
    private static final long LATENESS = Fixtures.SETTINGS.allowedLateness().toMillis();
    private static final WindowKey KEY_W0 = new WindowKey(ms(W0), "camp-a", "search");
    private static final long FIVE_QUINTILLION = 5_000_000_000_000_000_000L;

    private KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, WindowPartial, Row> harness;

    @BeforeEach
    void setUp() throws Exception {
        harness = newHarness();
        harness.open();
    }

    private static KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, WindowPartial, Row> newHarness()
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<WindowPartial> input =
                env.fromData(TypeInformation.of(WindowPartial.class), WindowPartial.of(ms(W0), click("seed", W0, 0)));
        @SuppressWarnings("unchecked")
        OneInputTransformation<WindowPartial, Row> window = (OneInputTransformation<WindowPartial, Row>)
                StreamJob.windowMetrics(input, Fixtures.SETTINGS).getTransformation();
        StreamOperatorFactory<Row> factory = window.getOperatorFactory();
        return new KeyedOneInputStreamOperatorTestHarness<>(factory, new CampaignChannelKey(), CampaignChannelKey.TYPE);
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    @Test
    void firesOnceWhenTheWatermarkPassesTheWindowEnd() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        feed(click("c1", W0.plusSeconds(20), 2));
        harness.processWatermark(new Watermark(ms(W1) - 2));
        assertThat(rows()).isEmpty();

        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows()).containsExactly(row(1, new WindowMetrics(1, 1, 0, 251_000, 2)));
    }

    @Test
    void anEventWithinAllowedLatenessFiresRevisionTwoWithFullTotalsCountingItOnce() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) + 10_000));
        feed(click("late", W0.plusSeconds(30), 2));
        harness.processWatermark(new Watermark(ms(W1) + 20_000));

        assertThat(rows())
                .containsExactly(
                        row(1, new WindowMetrics(1, 0, 0, 1_000, 1)), row(2, new WindowMetrics(1, 1, 0, 251_000, 2)));
        assertThat(harness.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW)).isNull();
    }

    @Test
    void anEventAfterAllowedLatenessGoesToTheLateOutputAndNotTheWindow() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) - 1 + LATENESS));
        AdEvent tooLate = click("too-late", W0.plusSeconds(30), 2);
        feed(tooLate);

        assertThat(rows()).containsExactly(row(1, new WindowMetrics(1, 0, 0, 1_000, 1)));
        assertThat(harness.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW))
                .extracting(r -> r.getValue().event)
                .containsExactly(tooLate);
    }

    @Test
    void stateAndTimersAreGoneAfterWindowEndPlusLateness() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        feed(click("c1", W1.plusSeconds(5), 2));
        harness.processWatermark(new Watermark(ms(W1) + 10_000));
        feed(click("late", W0.plusSeconds(30), 3)); // a re-firing also keeps revision state
        assertThat(harness.numKeyedStateEntries()).isPositive();
        assertThat(harness.numEventTimeTimers())
                .as("no timers: the windows are aligned, an index fires them")
                .isZero();

        harness.processWatermark(new Watermark(ms(W1) - 1 + LATENESS));
        assertThat(harness.numKeyedStateEntries())
                .as("W1 is still within lateness")
                .isPositive();
        harness.processWatermark(new Watermark(ms(W2) - 1 + LATENESS));

        assertThat(harness.numKeyedStateEntries()).isZero();
    }

    /**
     * Restored, the operator has no watermark until the sources emit one: a late partial for a window that fired
     * before the checkpoint waits for it, then fires revision + 1 with the full totals; an unfired window still fires.
     */
    @Test
    void afterARestoreFiredWindowsRefireOnceTheWatermarkComesBack() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) + 1_000));
        feed(click("w1", W1.plusSeconds(5), 2));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        feed(click("late", W0.plusSeconds(30), 3));
        assertThat(rows()).as("no watermark yet after the restore").isEmpty();
        harness.processWatermark(new Watermark(ms(W2) - 1));

        WindowKey keyW1 = new WindowKey(ms(W1), "camp-a", "search");
        assertThat(rows())
                .containsExactlyInAnyOrder(
                        row(2, new WindowMetrics(1, 1, 0, 251_000, 2)),
                        new Row(new WindowRow(keyW1, ms(W2), new WindowMetrics(0, 1, 0, 250_000, 1)), 1));
    }

    @Test
    void twoConversionsOfFiveQuintillionFireOneRowOfTenQuintillionExactly() throws Exception {
        feed(conversion("v1", W0.plusSeconds(1), FIVE_QUINTILLION));
        feed(conversion("v2", W0.plusSeconds(2), FIVE_QUINTILLION));

        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows())
                .containsExactly(row(1, new WindowMetrics(0, 0, 2, new BigInteger("10000000000000000000"), 2)));
    }

    @Test
    void spendBeyondALongSurvivesACheckpointOfTheWindowState() throws Exception {
        // Three events of Long.MAX_VALUE: the accumulator's low word wraps, so the carry must be in the snapshot.
        feed(conversion("v1", W0.plusSeconds(1), Long.MAX_VALUE));
        feed(conversion("v2", W0.plusSeconds(2), Long.MAX_VALUE));
        feed(conversion("v3", W0.plusSeconds(3), Long.MAX_VALUE));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        feed(conversion("v4", W0.plusSeconds(4), 1));
        harness.processWatermark(new Watermark(ms(W1) - 1));

        BigInteger expected = BigInteger.valueOf(Long.MAX_VALUE)
                .multiply(BigInteger.valueOf(3))
                .add(BigInteger.ONE);
        assertThat(rows()).containsExactly(row(1, new WindowMetrics(0, 0, 4, expected, 4)));
    }

    private static AdEvent conversion(String id, java.time.Instant time, long cost) {
        return Fixtures.event(id, EventType.CONVERSION, time, "camp-a", "search", cost, 0);
    }

    /** One event as the de-dup operator sends an event of a fired window on: a partial of its own. */
    private void feed(AdEvent e) throws Exception {
        harness.processElement(
                new StreamRecord<>(WindowPartial.of(Fixtures.SETTINGS.windows().windowStart(e.eventTs), e), e.eventTs));
    }

    /** Buffered sums as the de-dup operator sends them before the watermark: timestamped with the window's end - 1. */
    @Test
    void partialSumsAddUpExactlyAsTheirEventsWould() throws Exception {
        dev.recount.core.metrics.MetricsAccumulator first = new dev.recount.core.metrics.MetricsAccumulator()
                .add(impression("i1", W0.plusSeconds(5), 1))
                .add(click("c1", W0.plusSeconds(20), 2));
        dev.recount.core.metrics.MetricsAccumulator second = new dev.recount.core.metrics.MetricsAccumulator()
                .add(conversion("v1", W0.plusSeconds(30), Long.MAX_VALUE));
        harness.processElement(
                new StreamRecord<>(new WindowPartial(ms(W0), "camp-a", "search", first, null), ms(W1) - 1));
        harness.processElement(
                new StreamRecord<>(new WindowPartial(ms(W0), "camp-a", "search", second, null), ms(W1) - 1));
        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows())
                .containsExactly(row(
                        1,
                        new WindowMetrics(
                                1, 1, 1, BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(251_000)), 3)));
    }

    private List<Row> rows() {
        return harness.extractOutputValues().stream().collect(Collectors.toList());
    }

    private static Row row(int revision, WindowMetrics metrics) {
        return new Row(new WindowRow(KEY_W0, ms(W1), metrics), revision);
    }
}
