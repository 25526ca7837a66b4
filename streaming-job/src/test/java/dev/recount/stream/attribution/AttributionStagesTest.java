package dev.recount.stream.attribution;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The attribution join and its window sums, each in an operator harness and wired to each other as the job wires them:
 * events and watermarks in, rows out, and no state or timer left once the attribution window and lateness have passed.
 * Attribution window 10 min, 1 min windows, 1 min allowed lateness.
 */
class AttributionStagesTest {
    private static final long MINUTE = 60_000;
    private static final long WINDOW = 10 * MINUTE;
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();
    private static final AttributionRule RULE = new AttributionRule(WINDOW);

    private KeyedOneInputStreamOperatorTestHarness<String, AdEvent, AttributionDelta> join;
    private KeyedOneInputStreamOperatorTestHarness<Tuple3<Long, String, String>, AttributionDelta, Row> sums;
    private int joinOutputsTaken;
    private final List<Row> rows = new ArrayList<>();
    private long offset;

    @BeforeEach
    void setUp() throws Exception {
        join = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new AttributionJoin(RULE, SETTINGS.windows(), SETTINGS.allowedLateness())),
                AttributionJoin::key,
                Types.STRING);
        sums = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new AttributionWindows(SETTINGS.windows(), SETTINGS.allowedLateness())),
                new AttributionWindows.Key(),
                AttributionWindows.KEY_TYPE);
        join.open();
        sums.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        join.close();
        sums.close();
    }

    private AdEvent event(String id, EventType type, Instant ts, String requestId, long cost) {
        return new AdEvent(id, type, ms(ts), "camp-a", "search", cost, requestId, "t", 0, offset++, ms(ts));
    }

    private AdEvent impression(String id, Instant ts, String requestId) {
        return event(id, EventType.IMPRESSION, ts, requestId, 1_000);
    }

    private AdEvent click(String id, Instant ts, String requestId) {
        return event(id, EventType.CLICK, ts, requestId, 250_000);
    }

    private void feed(AdEvent e) throws Exception {
        join.processElement(new StreamRecord<>(e, e.eventTs));
        pass();
    }

    private void watermark(long w) throws Exception {
        join.processWatermark(new Watermark(w));
        pass();
        sums.processWatermark(new Watermark(w));
        takeRows();
    }

    /** The join's new outputs into the window sums, as the keyBy between them does. */
    private void pass() throws Exception {
        List<Object> out = new ArrayList<>(join.getOutput());
        for (Object o : out.subList(joinOutputsTaken, out.size())) {
            if (o instanceof StreamRecord<?> r) {
                @SuppressWarnings("unchecked")
                StreamRecord<AttributionDelta> d = (StreamRecord<AttributionDelta>) r;
                sums.processElement(new StreamRecord<>(d.getValue(), d.getTimestamp()));
            }
        }
        joinOutputsTaken = out.size();
        takeRows();
    }

    private void takeRows() {
        for (Object o : sums.getOutput()) {
            if (o instanceof StreamRecord<?> r && !rows.contains((Row) r.getValue())) rows.add((Row) r.getValue());
        }
    }

    private static Row row(
            Instant window, int revision, long attributed, long conversions, long unattributed, long spend) {
        return new Row(
                new AttributionRow(
                        new WindowKey(ms(window), "camp-a", "search"),
                        ms(window) + MINUTE,
                        new AttributionMetrics(attributed, conversions, unattributed, spend)),
                revision);
    }

    private static long lastMs(Instant window) {
        return ms(window) + MINUTE - 1;
    }

    @Test
    void aClickExactlyAtTheWindowBoundIsAttributedAndOneMillisecondLaterIsNot() throws Exception {
        Instant clickWindow = W0.plus(Duration.ofMinutes(10));
        feed(impression("i1", W0, "r1"));
        feed(click("at-bound", clickWindow, "r1"));
        feed(click("beyond", clickWindow.plusMillis(1), "r1"));
        watermark(lastMs(clickWindow));

        assertThat(rows).containsExactly(row(clickWindow, 1, 1, 0, 1, 250_000));
    }

    @Test
    void aClickBeforeItsImpressionInEventTimeIsNotAttributed() throws Exception {
        feed(click("early", W0.plusSeconds(10), "r1"));
        feed(impression("i1", W0.plusSeconds(11), "r1"));
        watermark(lastMs(W0));

        assertThat(rows).containsExactly(row(W0, 1, 0, 0, 1, 0));
    }

    @Test
    void aClickThatArrivesBeforeItsImpressionIsAttributedWhenTheImpressionComes() throws Exception {
        feed(click("c1", W0.plusSeconds(30), "r1"));
        feed(impression("i1", W0.plusSeconds(10), "r1"));
        watermark(lastMs(W0));

        assertThat(rows).containsExactly(row(W0, 1, 1, 0, 0, 250_000));
    }

    @Test
    void aLateImpressionWithinLatenessReFiresTheClicksWindowWithTheClickAttributed() throws Exception {
        feed(click("c1", W0.plusSeconds(30), "r1"));
        feed(event("v1", EventType.CONVERSION, W0.plusSeconds(40), "r1", 7_000_000));
        watermark(lastMs(W0) + 10_000);
        feed(impression("late-imp", W0.plusSeconds(5), "r1")); // within lateness: the dedup stage let it through

        // One re-firing per change, like a late event's: the click, then the conversion.
        assertThat(rows)
                .containsExactly(row(W0, 1, 0, 0, 1, 0), row(W0, 2, 1, 0, 0, 250_000), row(W0, 3, 1, 1, 0, 7_250_000));
    }

    @Test
    void anImpressionAfterTheClickWasSettledChangesNothing() throws Exception {
        feed(click("c1", W0.plusSeconds(30), "r1"));
        watermark(lastMs(W0) + LATENESS); // the click's window is final: an impression for it now would be too late
        feed(impression("too-late", W0.plusSeconds(5), "r1"));
        watermark(lastMs(W0) + LATENESS + 1);

        assertThat(rows).containsExactly(row(W0, 1, 0, 0, 1, 0));
    }

    @Test
    void twoImpressionsOfOneRequestAttributeAClickOnce() throws Exception {
        feed(click("c1", W0.plusSeconds(30), "r1"));
        feed(impression("i1", W0.plusSeconds(5), "r1"));
        feed(impression("i2", W0.plusSeconds(6), "r1"));
        feed(click("c2", W0.plusSeconds(40), "r1"));
        watermark(lastMs(W0));

        assertThat(rows).containsExactly(row(W0, 1, 2, 0, 0, 500_000));
    }

    @Test
    void withoutARequestIdAClickIsUnattributedAndAConversionCountsNothing() throws Exception {
        feed(click("c1", W0.plusSeconds(30), null));
        feed(event("v1", EventType.CONVERSION, W0.plusSeconds(31), null, 9));
        feed(impression("i0", W0.plusSeconds(1), null));
        watermark(lastMs(W0));

        assertThat(rows).containsExactly(row(W0, 1, 0, 0, 1, 0));
        assertThat(join.numKeyedStateEntries())
                .as("nothing is held for events without a request id")
                .isZero();
    }

    @Test
    void stateAndTimersAreGoneOnceTheAttributionWindowAndLatenessHavePassed() throws Exception {
        feed(impression("i1", W0, "r1"));
        feed(impression("i2", W0, "r2"));
        feed(click("c1", W0.plusSeconds(30), "r1"));
        feed(click("c2", W0.plusSeconds(30), "nobody"));
        watermark(lastMs(W0) + 5_000);
        assertThat(join.numKeyedStateEntries()).isPositive();
        assertThat(sums.numKeyedStateEntries()).isPositive();

        // The impressions are held until a click one attribution window after them is settled too.
        long impressionsSettled = lastMs(W0.plusMillis(WINDOW)) + LATENESS;
        watermark(impressionsSettled - 1);
        assertThat(join.numKeyedStateEntries()).isPositive();
        watermark(impressionsSettled);

        assertThat(join.numKeyedStateEntries()).isZero();
        assertThat(join.numEventTimeTimers()).isZero();
        assertThat(sums.numKeyedStateEntries()).isZero();
        assertThat(sums.numEventTimeTimers()).isZero();
        assertThat(rows).containsExactly(row(W0, 1, 1, 0, 1, 250_000));
    }
}
