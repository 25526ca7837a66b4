package dev.recount.stream.attribution;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import dev.recount.stream.Fixtures;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sink.SetAttributionRow;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The attribution join and its window sums, each in an operator harness and wired to each other as the job wires them:
 * events and watermarks in, rows out, and no state or timer left once the attribution window and lateness have passed.
 * Attribution window 10 min, 1 min windows, 1 min allowed lateness; the default set, then sets of their own and
 * checkpoints of the release before metric sets.
 */
class AttributionStagesTest {
    private static final long MINUTE = 60_000;
    private static final long WINDOW = 10 * MINUTE;
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();
    private static final AttributionRule RULE = new AttributionRule(WINDOW);

    private static final JobSets DEFAULT_ONLY = Fixtures.jobSets(Fixtures.defaultOnly(true));
    private static final String[] IN_DEFAULT = {MetricSet.DEFAULT};

    private KeyedOneInputStreamOperatorTestHarness<String, EventInSets, AttributionDelta> join;
    private KeyedOneInputStreamOperatorTestHarness<Tuple3<Long, String, String>, AttributionDelta, SetAttributionRow>
            sums;
    private int joinOutputsTaken;
    private final List<SetAttributionRow> setRows = new ArrayList<>();
    /** The default set's rows. */
    private final List<Row> rows = new ArrayList<>();

    private long offset;

    @BeforeEach
    void setUp() throws Exception {
        open(DEFAULT_ONLY, null, null);
    }

    /** Opens both stages computing {@code sets}, each restored from its snapshot when one is given. */
    private void open(JobSets sets, OperatorSubtaskState joinState, OperatorSubtaskState sumsState) throws Exception {
        join = new KeyedOneInputStreamOperatorTestHarness<>(
                new AttributionJoin(RULE, sets), AttributionJoin::key, Types.STRING);
        sums = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new AttributionWindows(sets)),
                AttributionWindows.keySelector(sets),
                SetKeys.ATTRIBUTION_KEY);
        if (joinState != null) join.initializeState(joinState);
        if (sumsState != null) sums.initializeState(sumsState);
        join.open();
        sums.open();
        joinOutputsTaken = 0;
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

    /** An event the de-dup stage counted in the default set. */
    private void feed(AdEvent e) throws Exception {
        feed(e, IN_DEFAULT);
    }

    private void feed(AdEvent e, String... sets) throws Exception {
        join.processElement(new StreamRecord<>(new EventInSets(e, sets), e.eventTs));
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
            if (o instanceof StreamRecord<?> r && !setRows.contains((SetAttributionRow) r.getValue())) {
                SetAttributionRow row = (SetAttributionRow) r.getValue();
                setRows.add(row);
                if (row.set().equals(MetricSet.DEFAULT)) rows.add(row.row());
            }
        }
    }

    private static Row row(
            Instant window, int revision, long attributed, long conversions, long unattributed, long spend) {
        return new Row(
                new AttributionRow(
                        WindowKey.of(ms(window), "camp-a", "search"),
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

    /**
     * Two sets with attribution: the default set (campaign, channel) and channel_country (channel, country, 5 min
     * windows here). A click counted in both gets a row in each, under each set's key and window; one the de-dup stage
     * counted in one set only (too late for the other) only there; the impression that arrives late attributes the
     * held click in every set whose window of it is still open.
     */
    @Test
    void everySetWithAttributionGetsItsOwnRowsUnderItsOwnKeysAndWindows() throws Exception {
        join.close();
        sums.close();
        JobSets sets = Fixtures.jobSets(Fixtures.definitions("""
                version: 1
                attributes:
                  country: {type: string, values: [DE, FR, other], default: other}
                sets:
                  - name: default
                  - name: channel_country
                    dimensions: [channel_id, country]
                    measures: [{name: clicks, kind: count, where: {event_type: click}}]
                    window: 5m
                """, true));
        open(sets, null, null);
        AdEvent i1 = withCountry(impression("i1", W0.plusSeconds(1), "r1"), "DE");
        AdEvent c1 = withCountry(click("c1", W0.plusSeconds(20), "r1"), "DE");
        AdEvent c2 = withCountry(click("c2", W0.plusSeconds(40), "r2"), "FR");
        feed(i1, MetricSet.DEFAULT, "channel_country");
        feed(c1, MetricSet.DEFAULT, "channel_country");
        feed(c2, "channel_country"); // too late for the default set's window: the de-dup stage sent it for one set
        watermark(lastMs(W0));
        // r2's impression, late within the lateness of both: only channel_country counted c2.
        feed(withCountry(impression("i2", W0.plusSeconds(30), "r2"), "FR"), MetricSet.DEFAULT, "channel_country");
        watermark(ms(W0) + 5 * MINUTE - 1);

        long w5 = ms(W0) + 5 * MINUTE;
        assertThat(setRows)
                .containsExactlyInAnyOrder(
                        new SetAttributionRow(MetricSet.DEFAULT, row(W0, 1, 1, 0, 0, 250_000)),
                        new SetAttributionRow(
                                "channel_country",
                                new Row(
                                        new AttributionRow(
                                                WindowKey.of(ms(W0), "search", "DE"),
                                                w5,
                                                new AttributionMetrics(1, 0, 0, 250_000)),
                                        1)),
                        new SetAttributionRow(
                                "channel_country",
                                new Row(
                                        new AttributionRow(
                                                WindowKey.of(ms(W0), "search", "FR"),
                                                w5,
                                                new AttributionMetrics(1, 0, 0, 250_000)),
                                        1)));
        watermark(w5 - 1 + LATENESS + WINDOW);
        assertThat(join.numKeyedStateEntries()).isZero();
        assertThat(sums.numKeyedStateEntries()).isZero();
        assertThat(sums.numEventTimeTimers()).isZero();
    }

    /**
     * Checkpoints of the release before metric sets (written by that release's own join and window sums, see
     * src/test/resources/previous-release). The join held the impression of r1 (W0 + 1 s) and the unattributed click of
     * r2 (W0 + 10 s); the sums had fired W0 of camp-a/search (one unattributed click) and held W1 (one attributed click
     * of 250,000) unfired, at watermark W1 + 10 s. Both restore as the default set's: r2's impression attributes its
     * held click, W0 re-fires with it, W1 fires, and nothing is left afterwards.
     */
    @Test
    void checkpointsOfThePreviousReleaseRestoreAsTheDefaultSetsAttribution() throws Exception {
        join.close();
        sums.close();
        open(
                DEFAULT_ONLY,
                OperatorSnapshotUtil.readStateHandle(previousRelease("attribution-join.snapshot")),
                OperatorSnapshotUtil.readStateHandle(previousRelease("attribution-windows.snapshot")));
        assertThat(join.numEventTimeTimers())
                .as("the previous release's timers")
                .isEqualTo(2);

        feed(impression("imp-r2", W0.plusSeconds(5), "r2"));
        feed(click("clk-r1", W1.plusSeconds(20), "r1")); // the restored impression of r1 attributes it
        watermark(lastMs(W1));

        assertThat(rows).containsExactly(row(W0, 2, 1, 0, 0, 250_000), row(W1, 1, 2, 0, 0, 500_000));
        // That release ran a 30 min attribution window: the impression it held keeps the timer it set for it.
        watermark(lastMs(W1) + LATENESS + WINDOW);
        assertThat(join.numKeyedStateEntries())
                .as("r1's impression, until its timer")
                .isEqualTo(1);
        watermark(ms(W0) + 32 * MINUTE);
        assertThat(join.numKeyedStateEntries()).isZero();
        assertThat(join.numEventTimeTimers()).isZero();
        assertThat(sums.numKeyedStateEntries()).isZero();
        assertThat(sums.numEventTimeTimers()).isZero();
    }

    private static AdEvent withCountry(AdEvent e, String country) {
        return e.withAttributes(new String[] {country}, null, "{\"country\":\"" + country + "\"}");
    }

    private static String previousRelease(String file) {
        return AttributionStagesTest.class
                .getResource("/previous-release/" + file)
                .getPath();
    }
}
