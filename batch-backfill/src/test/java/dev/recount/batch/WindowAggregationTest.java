package dev.recount.batch;

import static org.apache.spark.sql.functions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.batch.WindowAggregation.Plan;
import dev.recount.batch.WindowAggregation.SetScope;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.event.AdEvent;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.AttributeResolver;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.WindowRow;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;

/**
 * De-duplication and window metrics of metric sets on in-memory lake rows, against hand-computed totals and against
 * core's per-event maths ({@link MetricSet#add}: what the stream job sums), for the default set and for sets over
 * declared attributes resolved from the lake's JSON.
 */
class WindowAggregationTest {
    private static final MetricSet DEFAULT = TestSets.defaultSet();
    private static final MetricSets THREE = TestSets.parse(TestSets.THREE_SETS);
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long NEXT = W + 60_000;

    @Test
    void countsEachEventOnceInTheWindowOfItsEventTime() {
        LakeEvent firstMilli = LakeEvent.of("e1", "impression", W, "c1", "ch1", 100, 1);
        LakeEvent lastMilli = LakeEvent.of("e2", "click", W + 59_999, "c1", "ch1", 250, 2);
        LakeEvent nextWindow = LakeEvent.of("e3", "conversion", NEXT, "c1", "ch1", 5_000, 3);
        LakeEvent otherCampaign = LakeEvent.of("e4", "impression", W + 30_000, "c2", "ch1", 0, 4);
        // Two copies whose payloads differ: the lower offset wins, whatever the read order.
        LakeEvent laterCopy = LakeEvent.of("e5", "impression", W + 1_000, "c1", "ch1", 999, 10);
        LakeEvent earlierCopy = LakeEvent.of("e5", "impression", W + 1_000, "c1", "ch1", 111, 7);
        // Too late for the stream (arrived an hour after its window), still counted by the batch.
        LakeEvent tooLate =
                LakeEvent.of("e6", "click", W + 10_000, "c1", "ch1", 40, 5).receivedAfter(3_600_000);

        List<LakeEvent> lake = List.of(
                firstMilli,
                lastMilli,
                lastMilli.copyAt("ad-events", 1, 0),
                nextWindow,
                otherCampaign,
                laterCopy,
                earlierCopy,
                tooLate);

        Map<WindowKey, MeasureValues> result = aggregate(lake);

        assertThat(result)
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        WindowKey.of(W, "c1", "ch1"), MeasureValues.of(2, 2, 0, 100 + 250 + 111 + 40, 4),
                        WindowKey.of(W, "c2", "ch1"), MeasureValues.of(1, 0, 0, 0, 1),
                        WindowKey.of(NEXT, "c1", "ch1"), MeasureValues.of(0, 0, 1, 5_000, 1)));
    }

    @Test
    void keepsTheCopyWithTheLowestTopicPartitionOffset() {
        LakeEvent a = new LakeEvent("e1", "click", W, "c1", "ch1", 1, "ad-events", 2, 5, W);
        LakeEvent b = new LakeEvent("e1", "impression", W, "c1", "ch1", 2, "ad-events", 1, 900, W);
        LakeEvent c = new LakeEvent("e1", "conversion", W, "c1", "ch1", 3, "ad-events", 1, 901, W);

        assertThat(aggregate(List.of(a, b, c)))
                .containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), MeasureValues.of(1, 0, 0, 2, 1)));
        assertThat(aggregate(List.of(c, a, b)))
                .containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), MeasureValues.of(1, 0, 0, 2, 1)));
    }

    @Test
    void countsLakeRowsIncludingDuplicates() {
        LakeEvent e = LakeEvent.of("e1", "click", W, "c1", "ch1", 1, 1);
        Row only;
        try (WindowAggregation.Recomputed agg =
                recompute(frame(List.of(e, e.copyAt("ad-events", 0, 2), e.copyAt("replay", 0, 0))), List.of(DEFAULT))) {
            only = agg.stored(DEFAULT).collectAsList().get(0);
        }
        assertThat(only.getLong(only.fieldIndex(WindowAggregation.LAKE_ROWS))).isEqualTo(3);
        assertThat(only.getLong(only.fieldIndex("events"))).isEqualTo(1);
        assertThat(only.getLong(only.fieldIndex(WindowAggregation.LEFT_OUT))).isZero();
    }

    @Test
    void sumsSpendBeyondALongExactlyAsTheStreamDoes() {
        List<LakeEvent> lake = new ArrayList<>();
        MeasureSums stream = DEFAULT.newSums();
        for (int i = 0; i < 10; i++) {
            LakeEvent e = LakeEvent.of("big-" + i, "conversion", W + i, "c1", "ch1", 2_000_000_000_000_000_000L, i);
            lake.add(e);
            DEFAULT.add(stream, e.toAdEvent());
        }
        for (int i = 0; i < 3; i++) {
            LakeEvent e = LakeEvent.of(
                    "max-" + i, i == 0 ? "impression" : "click", W + 100 + i, "c1", "ch1", Long.MAX_VALUE, 100 + i);
            lake.add(e);
            DEFAULT.add(stream, e.toAdEvent());
        }
        BigInteger expected = new BigInteger("20000000000000000000")
                .add(BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(3)));

        Map<WindowKey, MeasureValues> result = aggregate(lake);

        MeasureValues values =
                new MeasureValues(BigInteger.ONE, BigInteger.TWO, BigInteger.TEN, expected, BigInteger.valueOf(13));
        assertThat(result).containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), values));
        assertThat(result.get(WindowKey.of(W, "c1", "ch1"))).isEqualTo(DEFAULT.values(stream));
        assertThat(expected).isGreaterThan(BigInteger.TWO.pow(64));
    }

    @Test
    void sparkAndTheStreamsMathsAgreeOnEveryMeasureForEveryEventType() {
        List<LakeEvent> lake = new ArrayList<>();
        String[] types = {"impression", "click", "conversion"};
        for (int i = 0; i < 60; i++) {
            long cost = i % 4 == 0 ? Long.MAX_VALUE - i : 1_000L * i;
            lake.add(LakeEvent.of("e" + i, types[i % 3], W + 1_000L * i, "c" + (i % 2), "ch1", cost, i));
        }
        assertThat(aggregate(lake)).isEqualTo(reference(lake, DEFAULT, List.of()).values);
    }

    @Test
    void copiesOfOneKafkaRecordAreCountedOnceAndThePayloadBreaksTies() {
        LakeEvent stored = new LakeEvent("e1", "click", W, "c1", "ch1", 5, "ad-events", 0, 7, W);
        LakeEvent storedAgain = stored.copyAt("ad-events", 0, 7);
        LakeEvent samePlaceOtherPayload = new LakeEvent("e1", "click", W, "c1", "ch1", 4, "ad-events", 0, 7, W);

        assertThat(aggregate(List.of(stored, storedAgain)))
                .containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), MeasureValues.of(0, 1, 0, 5, 1)));
        assertThat(aggregate(List.of(stored, samePlaceOtherPayload, storedAgain)))
                .containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), MeasureValues.of(0, 1, 0, 4, 1)));
    }

    /**
     * Three sets over attributes read from the lake's JSON, with copies whose attributes differ (the kept copy's
     * count), events without any (every attribute at its default) and values breaking an attribute's rule (left out
     * of the sets that read that attribute, and only of those): per set, every row and the events left out equal
     * core's per-event maths over the copies kept — with one scan per set and with one scan for all.
     */
    @Test
    void setsOverAttributesAgreeWithTheStreamsMathsInBothPlans() {
        Random random = new Random(20261129);
        String[] types = {"impression", "click", "conversion"};
        String[] attributes = {
            null,
            "{}",
            "{\"slot_id\":\"s1\"}",
            "{\"slot_id\":\"s2\",\"country\":\"DE\",\"quantity\":3}",
            "{\"country\":\"FR\",\"quantity\":9223372036854775807}",
            "{\"slot_id\":\"s1\",\"country\":\"XX\"}", // country not one of its values: out of channel_country
            "{\"slot_id\":\"\",\"quantity\":2}", // an empty id: out of campaign_slot
            "{\"slot_id\":5}", // not a string: out of campaign_slot
            "{\"quantity\":\"7\"}", // a string for an integer: out of channel_country
            "{\"country\":\"GB\",\"undeclared\":{\"nested\":[1,2]}}"
        };
        List<LakeEvent> lake = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            LakeEvent e = new LakeEvent(
                            "id-" + random.nextInt(200),
                            types[random.nextInt(3)],
                            W + random.nextInt(600_000),
                            "c" + random.nextInt(3),
                            "ch" + random.nextInt(2),
                            random.nextInt(1_000),
                            "ad-events",
                            random.nextInt(2),
                            random.nextInt(50),
                            W)
                    .withAttributes(attributes[random.nextInt(attributes.length)]);
            lake.add(e);
        }
        // A copy's event time is its event's: give every copy of an id the first one's.
        Map<String, Long> firstTs = new HashMap<>();
        List<LakeEvent> consistent = new ArrayList<>();
        for (LakeEvent e : lake) {
            long ts = firstTs.computeIfAbsent(e.eventId(), id -> e.eventTs());
            consistent.add(new LakeEvent(
                    e.eventId(),
                    e.eventType(),
                    ts,
                    e.campaignId(),
                    e.channelId(),
                    e.costMicros(),
                    e.topic(),
                    e.partition(),
                    e.offset(),
                    e.recordTs(),
                    e.requestId(),
                    e.attributes()));
        }
        Dataset<Row> frame = frame(consistent);
        List<MetricSet> sets = THREE.sets();
        for (Plan plan : Plan.values()) {
            try (WindowAggregation.Recomputed r = WindowAggregation.recompute(
                    frame, SetScope.allOf(sets), THREE.attributes(), plan, functions::xxhash64, 100)) {
                for (MetricSet set : sets) {
                    Reference expected = reference(consistent, set, THREE.attributes());
                    assertThat(collect(r.stored(set), set))
                            .as("%s, %s", set.name(), plan)
                            .isEqualTo(expected.values);
                    assertThat(sum(r.rows(set), WindowAggregation.LEFT_OUT))
                            .as("%s, %s: events left out", set.name(), plan)
                            .isEqualTo(expected.leftOut);
                    assertThat(sum(r.rows(set), WindowAggregation.LAKE_ROWS))
                            .as("%s, %s: lake rows", set.name(), plan)
                            .isEqualTo(consistent.size());
                }
            }
        }
        Reference slot = reference(consistent, THREE.set("campaign_slot").orElseThrow(), THREE.attributes());
        Reference country = reference(consistent, THREE.set("channel_country").orElseThrow(), THREE.attributes());
        assertThat(slot.leftOut)
                .as("the fixture leaves events out of campaign_slot")
                .isPositive();
        assertThat(country.leftOut)
                .as("the fixture leaves events out of channel_country")
                .isPositive();
        assertThat(slot.leftOut).isNotEqualTo(country.leftOut);
    }

    /**
     * An affected run recomputes other windows per set: each set counts only the rows its scope takes, in both
     * plans, the copies of an event all in or all out with it.
     */
    @Test
    void eachSetCountsOnlyTheRowsOfItsScope() {
        LakeEvent inFirst = LakeEvent.of("a", "click", W + 1_000, "c1", "ch1", 10, 1);
        LakeEvent inSecond = LakeEvent.of("b", "click", NEXT + 1_000, "c1", "ch1", 20, 2);
        List<LakeEvent> lake = List.of(inFirst, inFirst.copyAt("ad-events", 1, 9), inSecond);
        MetricSet slot = THREE.set("campaign_slot").orElseThrow();
        Column firstMinute = functions.col("event_ts").lt(NEXT);
        for (Plan plan : Plan.values()) {
            try (WindowAggregation.Recomputed r = WindowAggregation.recompute(
                    frame(lake),
                    List.of(new SetScope(DEFAULT, firstMinute), SetScope.all(slot)),
                    THREE.attributes(),
                    plan,
                    functions::xxhash64,
                    100)) {
                assertThat(collect(r.stored(DEFAULT), DEFAULT))
                        .as("%s", plan)
                        .containsExactly(Map.entry(WindowKey.of(W, "c1", "ch1"), MeasureValues.of(0, 1, 0, 10, 1)));
                assertThat(collect(r.stored(slot), slot))
                        .as("%s", plan)
                        .containsExactly(Map.entry(WindowKey.of(W, "c1", "none"), MeasureValues.of(0, 30, 2)));
                assertThat(sum(r.rows(DEFAULT), WindowAggregation.LAKE_ROWS)).isEqualTo(2);
            }
        }
    }

    /**
     * The hash only routes rows: with a hash that puts every id in one bucket (every row takes the long path), or ids
     * of equal length together, or with the shuffle join instead of the broadcast, the rows are the same
     * — measures and lake rows — and the same as keeping every id's least copy by its coordinates, the plain
     * definition, in Java. The fixture has copies with other payloads, in other windows, identical copies and ids
     * without copies.
     */
    @Test
    void theResultDoesNotDependOnTheHashOrTheJoin() {
        Random random = new Random(20261128);
        List<LakeEvent> lake = new ArrayList<>();
        String[] types = {"impression", "click", "conversion"};
        for (int i = 0; i < 400; i++) {
            LakeEvent e = new LakeEvent(
                    "id-" + random.nextInt(250),
                    types[random.nextInt(3)],
                    W + random.nextInt(180_000),
                    "c" + random.nextInt(3),
                    "ch" + random.nextInt(2),
                    random.nextInt(1_000),
                    "ad-events-" + random.nextInt(2),
                    random.nextInt(3),
                    random.nextInt(40),
                    W);
            lake.add(e);
            if (random.nextInt(10) == 0) lake.add(e);
        }
        Dataset<Row> frame = frame(lake);
        Reference reference = reference(lake, DEFAULT, List.of());
        Map<String, UnaryOperator<Column>> hashes = new LinkedHashMap<>();
        hashes.put("xxhash64", functions::xxhash64);
        hashes.put("one bucket", id -> lit(0L));
        hashes.put("by length", id -> functions.length(id).cast("long"));
        for (Map.Entry<String, UnaryOperator<Column>> hash : hashes.entrySet()) {
            for (long broadcastLimit : new long[] {100, 0}) {
                try (WindowAggregation.Recomputed r = WindowAggregation.recompute(
                        frame,
                        List.of(SetScope.all(DEFAULT)),
                        List.of(),
                        WindowAggregation.DEFAULT_PLAN,
                        hash.getValue(),
                        broadcastLimit)) {
                    String as = hash.getKey() + ", broadcast up to " + broadcastLimit;
                    assertThat(collect(r.stored(DEFAULT), DEFAULT)).as(as).isEqualTo(reference.values);
                    assertThat(lakeRows(r.stored(DEFAULT), DEFAULT)).as(as).isEqualTo(reference.lakeRows);
                    if (hash.getKey().equals("one bucket"))
                        assertThat(r.repeatedHashes()).isEqualTo(1);
                }
            }
        }
        assertThat(reference.values).hasSizeGreaterThan(5);
        assertThat(reference.lakeRows.values().stream()
                        .mapToLong(Long::longValue)
                        .sum())
                .isEqualTo(lake.size());
    }

    @Test
    void refusesASessionWithoutAnsiMode() {
        SparkSession lenient = SharedSpark.session().newSession();
        lenient.conf().set(SparkSessions.ANSI_MODE, "false");
        Dataset<Row> rows = lenient.createDataFrame(
                List.of(LakeEvent.of("e1", "click", W, "c1", "ch1", 1, 1).toRow()), LakeReader.FILE_SCHEMA);

        assertThatThrownBy(() -> recompute(rows, List.of(DEFAULT)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(SparkSessions.ANSI_MODE);
    }

    /** The lake rows of every stored key. */
    private static Map<WindowKey, Long> lakeRows(Dataset<Row> aggregated, MetricSet set) {
        Map<WindowKey, Long> out = new TreeMap<>(KEY_ORDER);
        for (Row r : aggregated.collectAsList()) {
            WindowRow w = StagingWriter.toWindowRow(r, set, set.window().toMillis());
            out.put(w.key(), r.getLong(r.fieldIndex(WindowAggregation.LAKE_ROWS)));
        }
        return out;
    }

    private static long sum(Dataset<Row> rows, String column) {
        Row r = rows.agg(functions.coalesce(functions.sum(column), lit(0L))).first();
        return r.getLong(0);
    }

    /**
     * Core's maths over the copies kept: per key of {@code set} its values, the events left out of it, and per key
     * the lake rows of the events it counts.
     */
    private record Reference(Map<WindowKey, MeasureValues> values, long leftOut, Map<WindowKey, Long> lakeRows) {}

    /**
     * What the stream's per-event maths make of {@code lake} for {@code set}: each id once (its least copy by
     * coordinates, then payload), its declared attributes resolved from the JSON by core's resolver, an event whose
     * value of an attribute the set reads breaks the rule left out.
     */
    private static Reference reference(List<LakeEvent> lake, MetricSet set, List<Attribute> declared) {
        Map<String, LakeEvent> kept = new HashMap<>();
        Comparator<LakeEvent> order = Comparator.comparing(LakeEvent::topic)
                .thenComparingInt(LakeEvent::partition)
                .thenComparingLong(LakeEvent::offset)
                .thenComparingLong(LakeEvent::eventTs)
                .thenComparing(LakeEvent::eventType)
                .thenComparing(LakeEvent::campaignId)
                .thenComparing(LakeEvent::channelId)
                .thenComparingLong(LakeEvent::costMicros)
                .thenComparing(LakeEvent::requestId, Comparator.nullsFirst(Comparator.naturalOrder()))
                .thenComparing(LakeEvent::attributes, Comparator.nullsFirst(Comparator.naturalOrder()));
        Map<String, Long> copies = new HashMap<>();
        for (LakeEvent e : lake) {
            kept.merge(e.eventId(), e, (a, b) -> order.compare(a, b) <= 0 ? a : b);
            copies.merge(e.eventId(), 1L, Long::sum);
        }
        Map<WindowKey, Long> lakeRows = new TreeMap<>(KEY_ORDER);
        AttributeResolver all = new AttributeResolver(declared);
        Map<WindowKey, MeasureSums> sums = new TreeMap<>(KEY_ORDER);
        long leftOut = 0;
        for (LakeEvent e : kept.values()) {
            AdEvent event = e.toAdEvent();
            String[] strings = new String[all.stringCount()];
            long[] integers = new long[all.integerCount()];
            boolean valid = true;
            int s = 0;
            int n = 0;
            for (Attribute a : declared) {
                AttributeResolver.Resolved one = new AttributeResolver(List.of(a)).resolve(e.attributes());
                boolean string = a.type() == dev.recount.core.sets.FieldType.STRING;
                if (one.isValid()) {
                    if (string) strings[s] = one.strings()[0];
                    else integers[n] = one.integers()[0];
                } else if (DeclaredAttributes.attributeNames(set).contains(a.name())) {
                    valid = false;
                }
                if (string) s++;
                else n++;
            }
            if (!valid) {
                leftOut++;
                continue;
            }
            event.withAttributes(strings, integers, e.attributes());
            WindowKey key = WindowKey.of(set.windows().windowStart(event.eventTs), set.dimensionValues(event));
            set.add(sums.computeIfAbsent(key, k -> set.newSums()), event);
            lakeRows.merge(key, copies.get(e.eventId()), Long::sum);
        }
        Map<WindowKey, MeasureValues> values = new TreeMap<>(KEY_ORDER);
        sums.forEach((k, v) -> values.put(k, set.values(v)));
        return new Reference(values, leftOut, lakeRows);
    }

    private static final Comparator<WindowKey> KEY_ORDER = Comparator.comparingLong(WindowKey::windowStartMillis)
            .thenComparing(k -> String.join("\u0000", k.dimensions()));

    private static WindowAggregation.Recomputed recompute(Dataset<Row> lake, List<MetricSet> sets) {
        return WindowAggregation.recompute(lake, SetScope.allOf(sets), List.of());
    }

    private static Map<WindowKey, MeasureValues> aggregate(List<LakeEvent> lake) {
        try (WindowAggregation.Recomputed windows = recompute(frame(lake), List.of(DEFAULT))) {
            return collect(windows.stored(DEFAULT), DEFAULT);
        }
    }

    private static Map<WindowKey, MeasureValues> collect(Dataset<Row> aggregated, MetricSet set) {
        Map<WindowKey, MeasureValues> out = new TreeMap<>(KEY_ORDER);
        for (Row r : aggregated.collectAsList()) {
            WindowRow w = StagingWriter.toWindowRow(r, set, set.window().toMillis());
            assertThat(w.windowEndMillis())
                    .isEqualTo(w.key().windowStartMillis() + set.window().toMillis());
            out.put(w.key(), w.values());
        }
        return out;
    }

    private static Dataset<Row> frame(List<LakeEvent> lake) {
        List<Row> rows = lake.stream().map(LakeEvent::toRow).toList();
        return SharedSpark.session().createDataFrame(rows, LakeReader.FILE_SCHEMA);
    }
}
