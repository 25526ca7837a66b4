package dev.recount.stream.window;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.defaultValues;
import static dev.recount.stream.Fixtures.impression;
import static dev.recount.stream.Fixtures.ms;
import static dev.recount.stream.Fixtures.withAttributes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.Fixtures;
import dev.recount.stream.StreamJob;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.sink.SetWindowRow;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The window stage exactly as the job builds it ({@link StreamJob#windowMetrics}), driven by a harness: partial sums
 * and watermarks in, rows and late partials out. The default set alone, then three sets with windows of two sizes,
 * sets removed and a checkpoint of the release before metric sets restored.
 */
class WindowMetricsTest {
    private static final long MINUTE = 60_000;
    private static final long LATENESS = Fixtures.SETTINGS.allowedLateness().toMillis();
    private static final WindowKey KEY_W0 = WindowKey.of(ms(W0), "camp-a", "search");
    private static final long FIVE_QUINTILLION = 5_000_000_000_000_000_000L;
    private static final JobSets DEFAULT_ONLY = Fixtures.jobSets(Fixtures.DEFAULT_ONLY);
    private static final JobSets THREE_SETS = Fixtures.jobSets(Fixtures.THREE_SETS);

    private KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, SetPartial, SetWindowRow> harness;
    private JobSets sets;

    private void open(JobSets sets) throws Exception {
        open(sets, null);
    }

    private void open(JobSets sets, OperatorSubtaskState snapshot) throws Exception {
        this.sets = sets;
        harness = newHarness(sets);
        if (snapshot != null) harness.initializeState(snapshot);
        harness.open();
    }

    private static KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, SetPartial, SetWindowRow> newHarness(
            JobSets sets) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<SetPartial> input = env.fromData(SetPartial.TYPE, partial(sets.get(0), click("seed", W0, 0)));
        @SuppressWarnings("unchecked")
        OneInputTransformation<SetPartial, SetWindowRow> window = (OneInputTransformation<SetPartial, SetWindowRow>)
                StreamJob.windowMetrics(input, sets).getTransformation();
        StreamOperatorFactory<SetWindowRow> factory = window.getOperatorFactory();
        return new KeyedOneInputStreamOperatorTestHarness<>(
                factory, WindowMetricsOperator.keySelector(sets), SetKeys.WINDOW_KEY);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (harness != null) harness.close();
    }

    @Test
    void firesOnceWhenTheWatermarkPassesTheWindowEnd() throws Exception {
        open(DEFAULT_ONLY);
        feed(impression("i1", W0.plusSeconds(5), 1));
        feed(click("c1", W0.plusSeconds(20), 2));
        harness.processWatermark(new Watermark(ms(W1) - 2));
        assertThat(rows()).isEmpty();

        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows()).containsExactly(row(1, defaultValues(1, 1, 0, 251_000, 2)));
    }

    @Test
    void anEventWithinAllowedLatenessFiresRevisionTwoWithFullTotalsCountingItOnce() throws Exception {
        open(DEFAULT_ONLY);
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) + 10_000));
        feed(click("late", W0.plusSeconds(30), 2));
        harness.processWatermark(new Watermark(ms(W1) + 20_000));

        assertThat(rows())
                .containsExactly(row(1, defaultValues(1, 0, 0, 1_000, 1)), row(2, defaultValues(1, 1, 0, 251_000, 2)));
        assertThat(harness.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW)).isNull();
    }

    @Test
    void anEventAfterAllowedLatenessGoesToTheLateOutputAndNotTheWindow() throws Exception {
        open(DEFAULT_ONLY);
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) - 1 + LATENESS));
        AdEvent tooLate = click("too-late", W0.plusSeconds(30), 2);
        feed(tooLate);

        assertThat(rows()).containsExactly(row(1, defaultValues(1, 0, 0, 1_000, 1)));
        assertThat(harness.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW))
                .extracting(r -> r.getValue().event)
                .containsExactly(tooLate);
    }

    @Test
    void stateIsGoneAfterWindowEndPlusLatenessAndNoTimerIsUsed() throws Exception {
        open(DEFAULT_ONLY);
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
        open(DEFAULT_ONLY);
        feed(impression("i1", W0.plusSeconds(5), 1));
        harness.processWatermark(new Watermark(ms(W1) + 1_000));
        feed(click("w1", W1.plusSeconds(5), 2));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(DEFAULT_ONLY, snapshot);
        feed(click("late", W0.plusSeconds(30), 3));
        assertThat(rows()).as("no watermark yet after the restore").isEmpty();
        harness.processWatermark(new Watermark(ms(W2) - 1));

        WindowKey keyW1 = WindowKey.of(ms(W1), "camp-a", "search");
        assertThat(rows())
                .containsExactlyInAnyOrder(
                        row(2, defaultValues(1, 1, 0, 251_000, 2)),
                        defaultRow(new Row(new WindowRow(keyW1, ms(W2), defaultValues(0, 1, 0, 250_000, 1)), 1)));
    }

    @Test
    void twoConversionsOfFiveQuintillionFireOneRowOfTenQuintillionExactly() throws Exception {
        open(DEFAULT_ONLY);
        feed(conversion("v1", W0.plusSeconds(1), FIVE_QUINTILLION));
        feed(conversion("v2", W0.plusSeconds(2), FIVE_QUINTILLION));

        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows()).containsExactly(row(1, defaultValues(0, 0, 2, new BigInteger("10000000000000000000"), 2)));
    }

    @Test
    void spendBeyondALongSurvivesACheckpointOfTheWindowState() throws Exception {
        open(DEFAULT_ONLY);
        // Three events of Long.MAX_VALUE: the sums' low word wraps, so the carry must be in the snapshot.
        feed(conversion("v1", W0.plusSeconds(1), Long.MAX_VALUE));
        feed(conversion("v2", W0.plusSeconds(2), Long.MAX_VALUE));
        feed(conversion("v3", W0.plusSeconds(3), Long.MAX_VALUE));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        open(DEFAULT_ONLY, snapshot);
        feed(conversion("v4", W0.plusSeconds(4), 1));
        harness.processWatermark(new Watermark(ms(W1) - 1));

        BigInteger expected = BigInteger.valueOf(Long.MAX_VALUE)
                .multiply(BigInteger.valueOf(3))
                .add(BigInteger.ONE);
        assertThat(rows()).containsExactly(row(1, defaultValues(0, 0, 4, expected, 4)));
    }

    /** Buffered sums as the de-dup operator sends them before the watermark: timestamped with the window's end - 1. */
    @Test
    void partialSumsAddUpExactlyAsTheirEventsWould() throws Exception {
        open(DEFAULT_ONLY);
        SetRules defaults = DEFAULT_ONLY.defaultSet();
        MetricSet set = defaults.set();
        SetPartial first = new SetPartial(
                MetricSet.DEFAULT,
                ms(W0),
                new String[] {"camp-a", "search"},
                set.add(
                        set.add(set.newSums(), impression("i1", W0.plusSeconds(5), 1)),
                        click("c1", W0.plusSeconds(20), 2)),
                null);
        SetPartial second = new SetPartial(
                MetricSet.DEFAULT,
                ms(W0),
                new String[] {"camp-a", "search"},
                set.add(set.newSums(), conversion("v1", W0.plusSeconds(30), Long.MAX_VALUE)),
                null);
        harness.processElement(new StreamRecord<>(first, ms(W1) - 1));
        harness.processElement(new StreamRecord<>(second, ms(W1) - 1));
        harness.processWatermark(new Watermark(ms(W1) - 1));

        assertThat(rows())
                .containsExactly(row(
                        1,
                        defaultValues(
                                1, 1, 1, BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(251_000)), 3)));
    }

    /**
     * Three sets: the default set and channel_country with 1 min windows, campaign_slot with 5 min ones. Each fires its
     * windows when the watermark reaches their own last millisecond, re-fires within the lateness after that, and
     * forgets them when its own window closes: one index by last millisecond serves both sizes.
     */
    @Test
    void everySetFiresAndForgetsItsWindowsByItsOwnSize() throws Exception {
        open(THREE_SETS);
        AdEvent i1 = withAttributes(impression("i1", W0.plusSeconds(5), 1), "top", "DE", 2);
        AdEvent c1 = withAttributes(click("c1", W0.plusSeconds(20), 2), "top", "FR", 3);
        AdEvent later = withAttributes(impression("i2", W2.plusSeconds(1), 3), "top", "DE", 0);
        for (AdEvent e : List.of(i1, c1, later)) feedAllSets(e);

        harness.processWatermark(new Watermark(ms(W1) - 1));
        assertThat(rows())
                .as("the 1 min windows of W0 fire; campaign_slot's [10:00, 10:05) does not")
                .containsExactlyInAnyOrder(
                        row(1, defaultValues(1, 1, 0, 251_000, 2)),
                        setRow("channel_country", ms(W0), ms(W1), 1, MeasureValues.of(0, 2, 1), "search", "DE"),
                        setRow("channel_country", ms(W0), ms(W1), 1, MeasureValues.of(1, 3, 1), "search", "FR"));
        harness.processWatermark(new Watermark(ms(W0) + 5 * MINUTE - 2));
        assertThat(rows())
                .as("W2 of the 1 min sets; still not the 5 min window")
                .hasSize(5)
                .noneMatch(r -> r.set().equals("campaign_slot"));

        harness.processWatermark(new Watermark(ms(W0) + 5 * MINUTE - 1));
        SetWindowRow slot = setRow(
                "campaign_slot", ms(W0), ms(W0) + 5 * MINUTE, 1, MeasureValues.of(2, 252_000, 3), "camp-a", "top");
        assertThat(rows()).hasSize(6).endsWith(slot);

        // Within its lateness (one minute after its end) a late event re-fires it; the 1 min window W0 is closed.
        AdEvent late = withAttributes(click("late", W0.plusSeconds(50), 4), "top", "US", 0);
        feedAllSets(late);
        assertThat(harness.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW))
                .extracting(r -> r.getValue().set)
                .containsExactlyInAnyOrder(MetricSet.DEFAULT, "channel_country");
        assertThat(rows())
                .endsWith(setRow(
                        "campaign_slot",
                        ms(W0),
                        ms(W0) + 5 * MINUTE,
                        2,
                        MeasureValues.of(2, 502_000, 4),
                        "camp-a",
                        "top"));

        harness.processWatermark(new Watermark(ms(W0) + 5 * MINUTE - 1 + LATENESS));
        assertThat(harness.numKeyedStateEntries())
                .as("every window closed: W0 and W2 of the 1 min sets, the 5 min one")
                .isZero();
    }

    /** A set removed from the definitions: its restored windows are dropped when the operator opens, the rest go on. */
    @Test
    void aSetRemovedOnRestoreLeavesNoStateAndTheOthersFireAsBefore() throws Exception {
        open(THREE_SETS);
        feedAllSets(withAttributes(impression("i1", W0.plusSeconds(5), 1), "top", "DE", 2));
        assertThat(harness.numKeyedStateEntries()).isEqualTo(3);
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.close();

        JobSets withoutCampaignSlot = Fixtures.jobSets(Fixtures.definitions(
                Fixtures.THREE_SETS_YAML.substring(0, Fixtures.THREE_SETS_YAML.indexOf("  - name: campaign_slot"))
                        + Fixtures.THREE_SETS_YAML.substring(
                                Fixtures.THREE_SETS_YAML.indexOf("  - name: channel_country")),
                false));
        open(withoutCampaignSlot, snapshot);
        assertThat(harness.numKeyedStateEntries()).isEqualTo(2);
        harness.processWatermark(new Watermark(Long.MAX_VALUE));
        assertThat(rows())
                .extracting(SetWindowRow::set)
                .containsExactlyInAnyOrder(MetricSet.DEFAULT, "channel_country");
        assertThat(harness.numKeyedStateEntries()).isZero();
    }

    /**
     * A checkpoint of the release before metric sets (written by that release's own window operator, see
     * src/test/resources/previous-release): its (campaign, channel) keys and windows are the default set's. W0 of
     * camp-a/search had fired twice (an impression of 1,000, clicks of 250,000 and 100); W1 of camp-b/video held three
     * conversions of 2^63 - 1, not fired.
     */
    @Test
    void aCheckpointOfThePreviousReleaseRestoresAsTheDefaultSetsWindows() throws Exception {
        open(THREE_SETS, OperatorSnapshotUtil.readStateHandle(previousRelease("window-metrics-by-key.snapshot")));
        feed(lateClick("late", W0.plusSeconds(40), 7, 10));
        assertThat(rows()).as("no watermark yet after the restore").isEmpty();
        harness.processWatermark(new Watermark(ms(W2) - 1));

        BigInteger threeMax = BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(3));
        assertThat(rows())
                .containsExactlyInAnyOrder(
                        row(3, defaultValues(1, 3, 0, 251_107, 4)),
                        defaultRow(new Row(
                                new WindowRow(
                                        WindowKey.of(ms(W1), "camp-b", "video"),
                                        ms(W2),
                                        defaultValues(0, 0, 3, threeMax, 3)),
                                1)));
        harness.processWatermark(new Watermark(ms(W2) - 1 + LATENESS));
        assertThat(harness.numKeyedStateEntries()).isZero();
    }

    /**
     * What reading the release before metric sets relies on (its window state here, its buffered sums in
     * {@link WindowPartial}, its committables): the default set's measures are that release's five, in its order, with
     * spend_micros the one sum.
     */
    @Test
    void theDefaultSetKeepsThePreviousReleasesMeasureLayout() {
        MetricSet set = DEFAULT_ONLY.defaultSet().set();
        assertThat(set.measureNames())
                .hasSize(KeyWindows.DEFAULT_ONLY_MEASURES)
                .containsExactly("impressions", "clicks", "conversions", "spend_micros", "events");
        assertThat(set.measures().stream().map(m -> m.isCount())).containsExactly(true, true, true, false, true);
        assertThat(set.measureNames().get(KeyWindows.DEFAULT_ONLY_SPEND)).isEqualTo("spend_micros");
    }

    static String previousRelease(String file) {
        return WindowMetricsTest.class.getResource("/previous-release/" + file).getPath();
    }

    private static AdEvent conversion(String id, Instant time, long cost) {
        return Fixtures.event(id, EventType.CONVERSION, time, "camp-a", "search", cost, 0);
    }

    private static AdEvent lateClick(String id, Instant time, long cost, long offset) {
        return Fixtures.event(id, EventType.CLICK, time, "camp-a", "search", cost, offset);
    }

    /** One event of the default set as the de-dup operator sends an event of a fired window on: a partial of its own. */
    private void feed(AdEvent e) throws Exception {
        SetRules defaults = sets.defaultSet();
        harness.processElement(new StreamRecord<>(partial(defaults, e), e.eventTs));
    }

    /** One event as a partial of its own in every set. */
    private void feedAllSets(AdEvent e) throws Exception {
        for (SetRules set : sets.all()) harness.processElement(new StreamRecord<>(partial(set, e), e.eventTs));
    }

    private static SetPartial partial(SetRules rules, AdEvent e) {
        MetricSet set = rules.set();
        return new SetPartial(
                set.name(), rules.time().windowStart(e.eventTs), set.dimensionValues(e), set.add(set.newSums(), e), e);
    }

    private List<SetWindowRow> rows() {
        return harness.extractOutputValues();
    }

    private static SetWindowRow row(int revision, MeasureValues values) {
        return defaultRow(new Row(new WindowRow(KEY_W0, ms(W1), values), revision));
    }

    private static SetWindowRow defaultRow(Row row) {
        return new SetWindowRow(MetricSet.DEFAULT, row);
    }

    private static SetWindowRow setRow(
            String set, long start, long end, int revision, MeasureValues values, String... dimensions) {
        return new SetWindowRow(set, new Row(new WindowRow(WindowKey.of(start, dimensions), end, values), revision));
    }
}
