package dev.recount.stream.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The attribution sink's writer and committable format, without a database. */
class AttributionMetricsSinkTest {
    private static final long W0 = 1_795_946_400_000L;

    private static SetAttributionRow row(String campaign, int revision, long attributed, BigInteger spend) {
        return new SetAttributionRow(
                MetricSet.DEFAULT,
                new Row(
                        new AttributionRow(
                                WindowKey.of(W0, campaign, "web"),
                                W0 + 60_000,
                                new AttributionMetrics(attributed, 1, 2, spend)),
                        revision));
    }

    private static SetAttributionRow countryRow(String country, int revision) {
        return new SetAttributionRow(
                "channel_country",
                new Row(
                        new AttributionRow(
                                WindowKey.of(W0, "web", country),
                                W0 + 300_000,
                                new AttributionMetrics(revision, 0, 0, BigInteger.valueOf(7))),
                        revision));
    }

    @Test
    void theWriterHandsOverTheLatestRevisionPerSetAndKeyOncePerCheckpoint() {
        AttributionMetricsSink.Writer writer = new AttributionMetricsSink.Writer();
        writer.write(row("b", 1, 1, BigInteger.ONE), null);
        writer.write(row("a", 2, 5, BigInteger.TEN), null);
        writer.write(row("a", 1, 3, BigInteger.TWO), null); // an older firing arriving later loses
        writer.write(countryRow("DE", 1), null);

        assertThat(writer.prepareCommit())
                .singleElement()
                .satisfies(c -> assertThat(c.rows())
                        .containsExactly(
                                countryRow("DE", 1), row("a", 2, 5, BigInteger.TEN), row("b", 1, 1, BigInteger.ONE)));
        assertThat(writer.prepareCommit())
                .as("nothing new since the last checkpoint")
                .isEmpty();
    }

    @Test
    void committablesSurviveTheirSerializerWithSpendBeyondALong() throws Exception {
        AttributionMetricsSink.Serializer serializer = new AttributionMetricsSink.Serializer();
        AttributionMetricsSink.Committable c = new AttributionMetricsSink.Committable(List.of(
                row("a", 3, 2, BigInteger.TWO.pow(100)),
                row("ü-multibyte", 1, 0, BigInteger.ZERO),
                countryRow("FR", 2)));

        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(c)))
                .isEqualTo(c);
    }

    /** Version 1 as the release before metric sets wrote it (its own serializer, src/test/resources/previous-release). */
    @Test
    void committablesOfThePreviousReleaseAreTheDefaultSets() throws Exception {
        byte[] bytes = Files.readAllBytes(Path.of(getClass()
                .getResource("/previous-release/attribution-committable-v1.bin")
                .toURI()));

        AttributionMetricsSink.Committable read = new AttributionMetricsSink.Serializer().deserialize(1, bytes);

        assertThat(read.rows())
                .containsExactly(new SetAttributionRow(
                        MetricSet.DEFAULT,
                        new Row(
                                new AttributionRow(
                                        WindowKey.of(W0, "camp-a", "search"),
                                        W0 + 60_000,
                                        new AttributionMetrics(2, 1, 3, BigInteger.valueOf(750_000))),
                                4)));
    }
}
