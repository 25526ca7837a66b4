package dev.recount.stream.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The attribution sink's writer and committable format, without a database. */
class AttributionMetricsSinkTest {
    private static final long W0 = 1_795_946_400_000L;

    private static Row row(String campaign, int revision, long attributed, BigInteger spend) {
        return new Row(
                new AttributionRow(
                        new WindowKey(W0, campaign, "web"),
                        W0 + 60_000,
                        new AttributionMetrics(attributed, 1, 2, spend)),
                revision);
    }

    @Test
    void theWriterHandsOverTheLatestRevisionPerKeyOncePerCheckpoint() {
        AttributionMetricsSink.Writer writer = new AttributionMetricsSink.Writer();
        writer.write(row("b", 1, 1, BigInteger.ONE), null);
        writer.write(row("a", 2, 5, BigInteger.TEN), null);
        writer.write(row("a", 1, 3, BigInteger.TWO), null); // an older firing arriving later loses

        assertThat(writer.prepareCommit())
                .singleElement()
                .satisfies(c -> assertThat(c.rows())
                        .containsExactly(row("a", 2, 5, BigInteger.TEN), row("b", 1, 1, BigInteger.ONE)));
        assertThat(writer.prepareCommit())
                .as("nothing new since the last checkpoint")
                .isEmpty();
    }

    @Test
    void committablesSurviveTheirSerializerWithSpendBeyondALong() throws Exception {
        AttributionMetricsSink.Serializer serializer = new AttributionMetricsSink.Serializer();
        AttributionMetricsSink.Committable c = new AttributionMetricsSink.Committable(
                List.of(row("a", 3, 2, BigInteger.TWO.pow(100)), row("ü-multibyte", 1, 0, BigInteger.ZERO)));

        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(c)))
                .isEqualTo(c);
    }
}
