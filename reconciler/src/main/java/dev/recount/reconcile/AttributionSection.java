package dev.recount.reconcile;

import static dev.recount.reconcile.report.Html.escape;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.reconcile.report.Money;
import dev.recount.reconcile.report.ReportSection;
import java.math.BigInteger;

/**
 * The report's attribution section: how the stream's attribution metrics compared with the batch layer's over the
 * range, their totals, and the corrections applied (or, in a dry run, that would be). Also {@code "attribution"} in
 * summary.json.
 */
final class AttributionSection implements ReportSection {
    private static final String[] LABELS = {"Attributed clicks", "Attributed conversions", "Unattributed clicks",
            "Attributed spend"};
    private final AttributionReconciliation.Outcome outcome;
    private final boolean dryRun;

    AttributionSection(AttributionReconciliation.Outcome outcome, boolean dryRun) {
        this.outcome = outcome;
        this.dryRun = dryRun;
    }

    @Override
    public String html() {
        KeyCounts k = outcome.counts();
        StringBuilder h = new StringBuilder("<section id=\"attribution\"><h2>Attribution</h2><p>");
        h.append(k.compared()).append(" keys (window of the click, campaign, channel): ").append(k.matched())
                .append(" match, ").append(k.mismatched()).append(" differ, ").append(k.missingInStream())
                .append(" only in batch, ").append(k.missingInBatch()).append(" only in stream. ")
                .append(outcome.valuesCorrected()).append(" values ").append(dryRun ? "would be" : "were")
                .append(" corrected in <code>attribution_metrics</code> (batch wins, exactly).</p>")
                .append("<table class=\"num\"><thead><tr><th>metric</th><th>stream</th><th>batch</th><th>difference</th>")
                .append("</tr></thead><tbody>");
        for (int i = 0; i < LABELS.length; i++) {
            BigInteger s = outcome.stream().get(i);
            BigInteger b = outcome.batch().get(i);
            boolean spend = i == 3;
            h.append("<tr><th>").append(escape(LABELS[i])).append("</th><td>").append(format(s, spend))
                    .append("</td><td>").append(format(b, spend)).append("</td><td>").append(format(s.subtract(b), spend))
                    .append("</td></tr>");
        }
        return h.append("</tbody></table></section>").toString();
    }

    private static String format(BigInteger v, boolean spend) {
        return escape(spend ? Money.units(v) : v.toString());
    }

    @Override
    public void addTo(ObjectNode summary) {
        ObjectNode a = summary.putObject("attribution");
        KeyCounts k = outcome.counts();
        ObjectNode keys = a.putObject("keys");
        keys.put("compared", k.compared());
        keys.put("matched", k.matched());
        keys.put("mismatched", k.mismatched());
        keys.put("missing_in_stream", k.missingInStream());
        keys.put("missing_in_batch", k.missingInBatch());
        ObjectNode stream = a.putObject("stream");
        ObjectNode batch = a.putObject("batch");
        for (int i = 0; i < AttributionMetrics.COLUMNS.length; i++) {
            stream.put(AttributionMetrics.COLUMNS[i], outcome.stream().get(i));
            batch.put(AttributionMetrics.COLUMNS[i], outcome.batch().get(i));
        }
        ObjectNode corrections = a.putObject("corrections");
        corrections.put("keys_finalized", outcome.keysFinalized());
        corrections.put("values_corrected", outcome.valuesCorrected());
        ObjectNode byReason = corrections.putObject("by_reason");
        for (Reason r : Reason.values()) byReason.put(r.wireName(), outcome.corrections().getOrDefault(r, 0L));
    }
}
