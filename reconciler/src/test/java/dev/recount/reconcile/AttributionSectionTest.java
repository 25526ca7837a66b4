package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.reconcile.testutils.DefaultSet;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The attribution section of report.html, rendered from its template without a database. */
class AttributionSectionTest {
    private static final AttributionReconciliation.Outcome OUTCOME = new AttributionReconciliation.Outcome(
            new KeyCounts(4, 1, 1, 1, 1, 3),
            new AttributionMetrics(10, 2, 5, 1_500_000),
            new AttributionMetrics(12, 2, 4, 1_750_000),
            3,
            Map.of(Reason.STREAM_MISMATCH, 2L, Reason.MISSING_IN_BATCH, 1L));

    @Test
    void showsCountsTotalsAndDifferences() {
        String html = new AttributionSection(OUTCOME, false, DefaultSet.TABLES).html();
        assertThat(html)
                .startsWith("<section id=\"attribution\"><h2>Attribution</h2>")
                .contains(
                        "4 keys (window of the click, campaign, channel): 1 match, 1 differ, 1 only in batch, 1 only in stream.")
                .contains("3 values were corrected in <code>attribution_metrics</code>")
                .contains("<tr><th>Attributed clicks</th><td>10</td><td>12</td><td>-2</td></tr>")
                .contains("<tr><th>Attributed spend</th><td>1.500000</td><td>1.750000</td><td>-0.250000</td></tr>")
                .endsWith("</tbody></table></section>");
    }

    @Test
    void aDryRunSaysWhatWouldBeCorrected() {
        assertThat(new AttributionSection(OUTCOME, true, DefaultSet.TABLES).html())
                .contains("3 values would be corrected in");
    }
}
