package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.WindowRow;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** De-duplication and window metrics on in-memory lake rows, against hand-computed totals. */
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
        LakeEvent tooLate = LakeEvent.of("e6", "click", W + 10_000, "c1", "ch1", 40, 5).receivedAfter(3_600_000);

        List<LakeEvent> lake = List.of(firstMilli, lastMilli, lastMilli.copyAt("ad-events", 1, 0), nextWindow,
                otherCampaign, laterCopy, earlierCopy, tooLate);

        Map<WindowKey, WindowMetrics> result = aggregate(lake);

        assertThat(result).containsExactlyInAnyOrderEntriesOf(Map.of(
                new WindowKey(W, "c1", "ch1"), new WindowMetrics(2, 2, 0, 100 + 250 + 111 + 40, 4),
                new WindowKey(W, "c2", "ch1"), new WindowMetrics(1, 0, 0, 0, 1),
                new WindowKey(NEXT, "c1", "ch1"), new WindowMetrics(0, 0, 1, 5_000, 1)));
    }

    @Test
    void keepsTheCopyWithTheLowestTopicPartitionOffset() {
        LakeEvent a = new LakeEvent("e1", "click", W, "c1", "ch1", 1, "ad-events", 2, 5, W);
        LakeEvent b = new LakeEvent("e1", "impression", W, "c1", "ch1", 2, "ad-events", 1, 900, W);
        LakeEvent c = new LakeEvent("e1", "conversion", W, "c1", "ch1", 3, "ad-events", 1, 901, W);

        assertThat(aggregate(List.of(a, b, c))).containsExactly(
                Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(1, 0, 0, 2, 1)));
        assertThat(aggregate(List.of(c, a, b))).containsExactly(
                Map.entry(new WindowKey(W, "c1", "ch1"), new WindowMetrics(1, 0, 0, 2, 1)));
    }

    @Test
    void countsLakeRowsIncludingDuplicates() {
        LakeEvent e = LakeEvent.of("e1", "click", W, "c1", "ch1", 1, 1);
        Dataset<Row> agg = WindowAggregation.aggregate(
                WindowAggregation.deduplicate(frame(List.of(e, e.copyAt("ad-events", 0, 2), e.copyAt("replay", 0, 0)))),
                MINUTE);
        Row only = agg.collectAsList().get(0);
        assertThat(only.getLong(only.fieldIndex(WindowAggregation.LAKE_ROWS))).isEqualTo(3);
        assertThat(only.getLong(only.fieldIndex("events"))).isEqualTo(1);
    }

    private static Map<WindowKey, WindowMetrics> aggregate(List<LakeEvent> lake) {
        Map<WindowKey, WindowMetrics> out = new TreeMap<>(java.util.Comparator.comparing(WindowKey::windowStartMillis)
                .thenComparing(WindowKey::campaignId).thenComparing(WindowKey::channelId));
        for (Row r : WindowAggregation.aggregate(WindowAggregation.deduplicate(frame(lake)), MINUTE).collectAsList()) {
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
