package dev.recount.batch;

import static org.apache.spark.sql.functions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.WindowRow;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * De-duplication and window metrics on in-memory lake rows, against hand-computed totals and against the stream's
 * accumulator (the Java definition of the same metrics).
 */
class WindowAggregationTest {
    private static final WindowAlignment MINUTE = new WindowAlignment(60_000);
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

        Map<WindowKey, WindowMetrics> result = aggregate(lake);

        assertThat(result)
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        new WindowKey(W, "c1", "ch1"), new WindowMetrics(2, 2, 0, 100 + 250 + 111 + 40, 4),
                        new WindowKey(W, "c2", "ch1"), new WindowMetrics(1, 0, 0, 0, 1),
                        new WindowKey(NEXT, "c1", "ch1"), new WindowMetrics(0, 0, 1, 5_000, 1)));
    }

    @Test
    void keepsTheCopyWithTheLowestTopicPartitionOffset() {
        LakeEvent a = new LakeEvent("e1", "click", W, "c1", "ch1", 1, "ad-events", 2, 5, W);
        LakeEvent b = new LakeEvent("e1", "impression", W, "c1", "ch1", 2, "ad-events", 1, 900, W);
        LakeEvent c = new LakeEvent("e1", "conversion", W, "c1", "ch1", 3, "ad-events", 1, 901, W);

        assertThat(aggregate(List.of(a, b, c)))
                .containsExactly(Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(1, 0, 0, 2, 1)));
        assertThat(aggregate(List.of(c, a, b)))
                .containsExactly(Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(1, 0, 0, 2, 1)));
    }

    @Test
    void countsLakeRowsIncludingDuplicates() {
        LakeEvent e = LakeEvent.of("e1", "click", W, "c1", "ch1", 1, 1);
        Row only;
        try (WindowAggregation.Recomputed agg = WindowAggregation.recompute(
                frame(List.of(e, e.copyAt("ad-events", 0, 2), e.copyAt("replay", 0, 0))), MINUTE)) {
            only = agg.rows().collectAsList().get(0);
        }
        assertThat(only.getLong(only.fieldIndex(WindowAggregation.LAKE_ROWS))).isEqualTo(3);
        assertThat(only.getLong(only.fieldIndex("events"))).isEqualTo(1);
    }

    @Test
    void sumsSpendBeyondALongExactlyAsTheStreamDoes() {
        List<LakeEvent> lake = new ArrayList<>();
        MetricsAccumulator stream = new MetricsAccumulator();
        for (int i = 0; i < 10; i++) {
            LakeEvent e = LakeEvent.of("big-" + i, "conversion", W + i, "c1", "ch1", 2_000_000_000_000_000_000L, i);
            lake.add(e);
            stream.add(e.toAdEvent());
        }
        for (int i = 0; i < 3; i++) {
            LakeEvent e = LakeEvent.of(
                    "max-" + i, i == 0 ? "impression" : "click", W + 100 + i, "c1", "ch1", Long.MAX_VALUE, 100 + i);
            lake.add(e);
            stream.add(e.toAdEvent());
        }
        BigInteger expected = new BigInteger("20000000000000000000")
                .add(BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(3)));

        Map<WindowKey, WindowMetrics> result = aggregate(lake);

        assertThat(result)
                .containsExactly(Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(1, 2, 10, expected, 13)));
        assertThat(result.get(new WindowKey(W, "c1", "ch1"))).isEqualTo(stream.toMetrics());
        assertThat(expected).isGreaterThan(BigInteger.TWO.pow(64));
    }

    @Test
    void sparkAndTheJavaAccumulatorAgreeOnEveryMetricForEveryEventType() {
        List<LakeEvent> lake = new ArrayList<>();
        Map<WindowKey, MetricsAccumulator> java = new TreeMap<>(KEY_ORDER);
        String[] types = {"impression", "click", "conversion"};
        for (int i = 0; i < 60; i++) {
            long cost = i % 4 == 0 ? Long.MAX_VALUE - i : 1_000L * i;
            LakeEvent e = LakeEvent.of("e" + i, types[i % 3], W + 1_000L * i, "c" + (i % 2), "ch1", cost, i);
            lake.add(e);
            java.computeIfAbsent(
                            new WindowKey(MINUTE.windowStart(e.eventTs()), e.campaignId(), e.channelId()),
                            k -> new MetricsAccumulator())
                    .add(e.toAdEvent());
        }
        Map<WindowKey, WindowMetrics> expected = new TreeMap<>(KEY_ORDER);
        java.forEach((k, acc) -> expected.put(k, acc.toMetrics()));

        assertThat(aggregate(lake)).isEqualTo(expected);
    }

    @Test
    void copiesOfOneKafkaRecordAreCountedOnceAndThePayloadBreaksTies() {
        LakeEvent stored = new LakeEvent("e1", "click", W, "c1", "ch1", 5, "ad-events", 0, 7, W);
        LakeEvent storedAgain = stored.copyAt("ad-events", 0, 7);
        LakeEvent samePlaceOtherPayload = new LakeEvent("e1", "click", W, "c1", "ch1", 4, "ad-events", 0, 7, W);

        assertThat(aggregate(List.of(stored, storedAgain)))
                .containsExactly(Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(0, 1, 0, 5, 1)));
        assertThat(aggregate(List.of(stored, samePlaceOtherPayload, storedAgain)))
                .containsExactly(Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(0, 1, 0, 4, 1)));
    }

    /**
     * The hash only routes rows: with a hash that puts every id in one bucket (every row takes the long path), or ids
     * of equal length together, or with the shuffle join instead of the broadcast, the rows are the same — metrics and
     * lake rows — and the same as ranking every row by its coordinates, the plain definition. The fixture has copies
     * with other payloads, in other windows, identical copies and ids without copies.
     */
    @Test
    void theResultDoesNotDependOnTheHashOrTheJoin() {
        java.util.Random random = new java.util.Random(20261128);
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
        List<String> reference = rows(WindowAggregation.aggregate(rankedByCoordinates(frame), MINUTE));

        try (WindowAggregation.Recomputed good = WindowAggregation.recompute(frame, MINUTE);
                WindowAggregation.Recomputed oneBucket =
                        WindowAggregation.recompute(frame, MINUTE, id -> lit(0L), 100);
                WindowAggregation.Recomputed byLength = WindowAggregation.recompute(
                        frame,
                        MINUTE,
                        id -> org.apache.spark.sql.functions.length(id).cast("long"),
                        0)) {
            assertThat(rows(good.rows())).isEqualTo(reference);
            assertThat(rows(oneBucket.rows())).isEqualTo(reference);
            assertThat(rows(byLength.rows())).isEqualTo(reference);
            assertThat(oneBucket.repeatedHashes()).isEqualTo(1);
        }
        assertThat(reference).isNotEmpty();
    }

    /** Every column of every window row (metrics and lake rows), in key order. */
    private static List<String> rows(Dataset<Row> aggregated) {
        return aggregated.orderBy(WindowAggregation.WINDOW_START, "campaign_id", "channel_id").collectAsList().stream()
                .map(Row::toString)
                .toList();
    }

    /** The definition, as the batch layer computed it before: rank every row of an id by coordinates, then payload. */
    private static Dataset<Row> rankedByCoordinates(Dataset<Row> rows) {
        org.apache.spark.sql.expressions.WindowSpec byEvent =
                org.apache.spark.sql.expressions.Window.partitionBy(org.apache.spark.sql.functions.col("event_id"));
        org.apache.spark.sql.Column[] order = java.util.stream.Stream.of(
                        "kafka_topic",
                        "kafka_partition",
                        "kafka_offset",
                        "event_ts",
                        "event_type",
                        "campaign_id",
                        "channel_id",
                        "cost_micros")
                .map(org.apache.spark.sql.functions::col)
                .toArray(org.apache.spark.sql.Column[]::new);
        return rows.withColumn(
                        "copy_rank", org.apache.spark.sql.functions.row_number().over(byEvent.orderBy(order)))
                .withColumn(
                        WindowAggregation.LAKE_ROWS,
                        org.apache.spark.sql.functions.count(lit(1)).over(byEvent))
                .filter("copy_rank = 1")
                .select(
                        "event_id",
                        "event_ts",
                        "event_type",
                        "campaign_id",
                        "channel_id",
                        "cost_micros",
                        WindowAggregation.LAKE_ROWS);
    }

    @Test
    void refusesASessionWithoutAnsiMode() {
        SparkSession lenient = SharedSpark.session().newSession();
        lenient.conf().set(SparkSessions.ANSI_MODE, "false");
        Dataset<Row> rows = lenient.createDataFrame(
                List.of(LakeEvent.of("e1", "click", W, "c1", "ch1", 1, 1).toRow()), LakeReader.FILE_SCHEMA);

        assertThatThrownBy(() -> WindowAggregation.recompute(rows, MINUTE))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(SparkSessions.ANSI_MODE);
    }

    private static final java.util.Comparator<WindowKey> KEY_ORDER = java.util.Comparator.comparing(
                    WindowKey::windowStartMillis)
            .thenComparing(WindowKey::campaignId)
            .thenComparing(WindowKey::channelId);

    private static Map<WindowKey, WindowMetrics> aggregate(List<LakeEvent> lake) {
        try (WindowAggregation.Recomputed windows = WindowAggregation.recompute(frame(lake), MINUTE)) {
            return collect(windows.rows());
        }
    }

    private static Map<WindowKey, WindowMetrics> collect(Dataset<Row> aggregated) {
        Map<WindowKey, WindowMetrics> out = new TreeMap<>(KEY_ORDER);
        for (Row r : aggregated.collectAsList()) {
            WindowRow w = StagingWriter.toWindowRow(r, MINUTE.sizeMillis());
            assertThat(w.windowEndMillis()).isEqualTo(w.key().windowStartMillis() + 60_000);
            out.put(w.key(), w.metrics());
        }
        return out;
    }

    private static Dataset<Row> frame(List<LakeEvent> lake) {
        List<Row> rows = lake.stream().map(LakeEvent::toRow).toList();
        return SharedSpark.session().createDataFrame(rows, LakeReader.FILE_SCHEMA);
    }
}
