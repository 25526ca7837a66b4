package dev.recount.stream.sink;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.defaultValues;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

/**
 * The writer's two promises: one row per (set, key) — the latest revision — per checkpoint, and progress one checkpoint
 * late; and the committables' format, of this release and of the one before metric sets.
 */
class WindowMetricsWriterTest {
    private final WindowMetricsWriter writer = new WindowMetricsWriter(new UnregisteredMetricsGroup(), null);

    @Test
    void keepsTheLatestRevisionPerKeyAndSortsByKey() throws Exception {
        writer.write(row(ms(W1), "b", 1, 10), null);
        writer.write(row(ms(W0), "a", 2, 20), null);
        writer.write(row(ms(W0), "a", 1, 10), null); // an older revision arriving later never wins

        List<WindowMetricsCommittable> committables = List.copyOf(writer.prepareCommit());

        assertThat(committables).hasSize(1);
        assertThat(committables.get(0).rows()).containsExactly(row(ms(W0), "a", 2, 20), row(ms(W1), "b", 1, 10));
        assertThat(committables.get(0).progress()).isNull();
        assertThat(writer.prepareCommit()).isEmpty();
    }

    @Test
    void theSameKeyInTwoSetsIsTwoRowsSortedBySetThenKey() throws Exception {
        SetWindowRow slot = setRow("campaign_slot", ms(W0), 1, "a", "top");
        SetWindowRow slotLater = setRow("campaign_slot", ms(W0), 2, "a", "top");
        writer.write(slotLater, null);
        writer.write(row(ms(W0), "a", 1, 10), null);
        writer.write(slot, null);
        writer.write(setRow("campaign_slot", ms(W0), 1, "a", "bottom"), null);

        assertThat(List.copyOf(writer.prepareCommit()).get(0).rows())
                .containsExactly(setRow("campaign_slot", ms(W0), 1, "a", "bottom"), slotLater, row(ms(W0), "a", 1, 10));
    }

    @Test
    void progressIsTheWatermarkOfThePreviousCheckpoint() throws Exception {
        writer.writeWatermark(new Watermark(ms(W1)));
        assertThat(writer.prepareCommit()).isEmpty(); // checkpoint 1: nothing to say yet
        assertThat(writer.snapshotState(1)).containsExactly(new ProgressMark(1, ms(W1)));

        writer.writeWatermark(new Watermark(ms(W2)));
        writer.write(row(ms(W1), "a", 1, 5), null);
        List<WindowMetricsCommittable> second = List.copyOf(writer.prepareCommit()); // checkpoint 2
        writer.snapshotState(2);

        assertThat(second.get(0).progress()).isEqualTo(new ProgressMark(1, ms(W1)));

        // End of input: the final watermark is not event time the lake has reached.
        writer.writeWatermark(Watermark.MAX_WATERMARK);
        List<WindowMetricsCommittable> last = List.copyOf(writer.prepareCommit());
        assertThat(last.get(0).progress()).isEqualTo(new ProgressMark(2, ms(W2)));
        assertThat(writer.snapshotState(3)).containsExactly(new ProgressMark(3, ms(W2)));
    }

    @Test
    void committablesSurviveTheirSerializerIncludingLongIds() throws Exception {
        String longId = "c".repeat(100_000);
        WindowMetricsCommittable c = new WindowMetricsCommittable(
                List.of(
                        row(ms(W0), longId, 3, 7),
                        row(ms(W1), "ü-ß", 1, Long.MAX_VALUE),
                        setRow("channel_country", ms(W1), 2, "search", "DE")),
                new ProgressMark(9, -5));
        WindowMetricsCommittable.Serializer serializer = new WindowMetricsCommittable.Serializer();

        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(c)))
                .isEqualTo(c);
    }

    @Test
    void committablesCarrySpendBeyondALongExactly() throws Exception {
        WindowMetricsCommittable c = new WindowMetricsCommittable(
                List.of(
                        spendRow(ms(W0), "a", BigInteger.TWO.pow(100).add(BigInteger.ONE)),
                        spendRow(ms(W0), "b", BigInteger.TWO.pow(63)),
                        spendRow(ms(W0), "c", new BigInteger("10000000000000000000")),
                        spendRow(ms(W0), "d", BigInteger.ZERO)),
                null);
        WindowMetricsCommittable.Serializer serializer = new WindowMetricsCommittable.Serializer();

        assertThat(serializer.getVersion()).isEqualTo(3);
        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(c)))
                .isEqualTo(c);
    }

    @Test
    void readsCommittablesOfVersionOneFromRetainedCheckpoints() throws Exception {
        // Version 1 as the previous release wrote it: every metric a long.
        DataOutputSerializer out = new DataOutputSerializer(128);
        ProgressMark.write(out, new ProgressMark(4, ms(W0)));
        out.writeInt(1);
        out.writeLong(ms(W1));
        out.writeLong(ms(W1) + 60_000);
        for (String id : List.of("camp", "search")) {
            byte[] b = id.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }
        for (long v : new long[] {3, 2, 1, Long.MAX_VALUE, 6}) out.writeLong(v);
        out.writeInt(5);

        WindowMetricsCommittable read = new WindowMetricsCommittable.Serializer().deserialize(1, out.getCopyOfBuffer());

        assertThat(read)
                .isEqualTo(new WindowMetricsCommittable(
                        List.of(new SetWindowRow(
                                MetricSet.DEFAULT,
                                new Row(
                                        new WindowRow(
                                                WindowKey.of(ms(W1), "camp", "search"),
                                                ms(W1) + 60_000,
                                                defaultValues(3, 2, 1, Long.MAX_VALUE, 6)),
                                        5))),
                        new ProgressMark(4, ms(W0))));
    }

    /** Version 2 as the release before metric sets wrote it (its own serializer, src/test/resources/previous-release). */
    @Test
    void readsCommittablesOfThePreviousReleaseAsTheDefaultSets() throws Exception {
        byte[] bytes = Files.readAllBytes(Path.of(getClass()
                .getResource("/previous-release/window-metrics-committable-v2.bin")
                .toURI()));

        WindowMetricsCommittable read = new WindowMetricsCommittable.Serializer().deserialize(2, bytes);

        assertThat(read)
                .isEqualTo(new WindowMetricsCommittable(
                        List.of(new SetWindowRow(
                                MetricSet.DEFAULT,
                                new Row(
                                        new WindowRow(
                                                WindowKey.of(ms(W0), "camp-a", "search"),
                                                ms(W1),
                                                defaultValues(
                                                        1,
                                                        2,
                                                        0,
                                                        BigInteger.TWO.pow(64).add(BigInteger.valueOf(5)),
                                                        3)),
                                        2))),
                        new ProgressMark(7, ms(W0))));
    }

    private static SetWindowRow spendRow(long windowStart, String campaign, BigInteger spend) {
        return new SetWindowRow(
                MetricSet.DEFAULT,
                new Row(
                        new WindowRow(
                                WindowKey.of(windowStart, campaign, "search"),
                                windowStart + 60_000,
                                defaultValues(1, 0, 1, spend, 2)),
                        1));
    }

    private static SetWindowRow row(long windowStart, String campaign, int revision, long events) {
        return new SetWindowRow(
                MetricSet.DEFAULT,
                new Row(
                        new WindowRow(
                                WindowKey.of(windowStart, campaign, "search"),
                                windowStart + 60_000,
                                defaultValues(events, 0, 0, 0, events)),
                        revision));
    }

    /** A row of another set: two dimensions, an impressions count, a sum and events. */
    private static SetWindowRow setRow(String set, long windowStart, int revision, String... dimensions) {
        return new SetWindowRow(
                set,
                new Row(
                        new WindowRow(
                                WindowKey.of(windowStart, dimensions),
                                windowStart + 300_000,
                                MeasureValues.of(revision, 250_000L * revision, revision)),
                        revision));
    }
}
