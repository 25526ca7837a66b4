package dev.recount.stream.window;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.impression;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.Fixtures;
import dev.recount.stream.StreamJob;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
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

    private KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, AdEvent, Row> harness;

    @BeforeEach
    void setUp() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<AdEvent> input = env.fromData(TypeInformation.of(AdEvent.class), click("seed", W0, 0));
        @SuppressWarnings("unchecked")
        OneInputTransformation<AdEvent, Row> window =
                (OneInputTransformation<AdEvent, Row>) StreamJob.windowMetrics(input, Fixtures.SETTINGS).getTransformation();
        StreamOperatorFactory<Row> factory = window.getOperatorFactory();
        harness = new KeyedOneInputStreamOperatorTestHarness<>(factory, new CampaignChannelKey(), CampaignChannelKey.TYPE);
        harness.open();
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

        assertThat(rows()).containsExactly(
                row(1, new WindowMetrics(1, 0, 0, 1_000, 1)),
                row(2, new WindowMetrics(1, 1, 0, 251_000, 2)));
        assertThat(harness.getSideOutput(StreamJob.LATE_AT_WINDOW_TAG)).isNull();
    }

    @Test
    void anEventAfterAllowedLatenessGoesToTheLateOutputAndNotTheWindow() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) - 1 + LATENESS));
        AdEvent tooLate = click("too-late", W0.plusSeconds(30), 2);
        feed(tooLate);

        assertThat(rows()).containsExactly(row(1, new WindowMetrics(1, 0, 0, 1_000, 1)));
        assertThat(harness.getSideOutput(StreamJob.LATE_AT_WINDOW_TAG))
                .extracting(StreamRecord::getValue).containsExactly(tooLate);
    }

    @Test
    void stateAndTimersAreGoneAfterWindowEndPlusLateness() throws Exception {
        feed(impression("i1", W0.plusSeconds(5), 1));
        feed(click("c1", W1.plusSeconds(5), 2));
        harness.processWatermark(new Watermark(ms(W1) + 10_000));
        feed(click("late", W0.plusSeconds(30), 3)); // a re-firing also keeps revision state
        assertThat(harness.numKeyedStateEntries()).isPositive();
        assertThat(harness.numEventTimeTimers()).isPositive();

        harness.processWatermark(new Watermark(ms(W2) - 1 + LATENESS));

        assertThat(harness.numKeyedStateEntries()).isZero();
        assertThat(harness.numEventTimeTimers()).isZero();
    }

    private void feed(AdEvent e) throws Exception {
        harness.processElement(new StreamRecord<>(e, e.eventTs));
    }

    private List<Row> rows() {
        return harness.extractOutputValues().stream().collect(Collectors.toList());
    }

    private static Row row(int revision, WindowMetrics metrics) {
        return new Row(new WindowRow(KEY_W0, ms(W1), metrics), revision);
    }
}
