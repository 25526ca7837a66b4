package dev.recount.reconcile;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.reconcile.report.Labels;
import dev.recount.reconcile.report.Money;
import dev.recount.reconcile.report.ReportSection;
import dev.recount.reconcile.report.Templates;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * A metric set's attribution section of the report: how the stream's attribution metrics compared with the batch
 * layer's over the range, their totals, and the corrections applied (or, in a dry run, that would be). Also {@code
 * "attribution"} in the set's part of summary.json.
 */
final class AttributionSection implements ReportSection {
    private static final String[] LABELS = {
        "Attributed clicks", "Attributed conversions", "Unattributed clicks", "Attributed spend"
    };
    private final AttributionReconciliation.Outcome outcome;
    private final boolean dryRun;
    private final SetTables tables;

    AttributionSection(AttributionReconciliation.Outcome outcome, boolean dryRun, SetTables tables) {
        this.outcome = outcome;
        this.dryRun = dryRun;
        this.tables = tables;
    }

    /**
     * What attribution.mustache shows (the engine escapes every value): {@code dimensions} in words ("campaign,
     * channel"), the set's attribution view, its ids' prefix (empty for the default set).
     */
    public record View(
            String idPrefix,
            String dimensions,
            String view,
            long compared,
            long matched,
            long mismatched,
            long missingInStream,
            long missingInBatch,
            long valuesCorrected,
            boolean dryRun,
            List<Row> rows) {}

    public record Row(String label, String stream, String batch, String difference) {}

    @Override
    public String html() {
        KeyCounts k = outcome.counts();
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < LABELS.length; i++) {
            BigInteger s = outcome.stream().get(i);
            BigInteger b = outcome.batch().get(i);
            boolean spend = i == 3;
            rows.add(new Row(LABELS[i], format(s, spend), format(b, spend), format(s.subtract(b), spend)));
        }
        return Templates.render(
                Templates.ATTRIBUTION,
                new View(
                        Labels.idPrefix(tables.set()),
                        Labels.dimensionWords(tables.set()),
                        tables.name("attribution_metrics"),
                        k.compared(),
                        k.matched(),
                        k.mismatched(),
                        k.missingInStream(),
                        k.missingInBatch(),
                        outcome.valuesCorrected(),
                        dryRun,
                        rows));
    }

    private static String format(BigInteger v, boolean spend) {
        return spend ? Money.units(v) : v.toString();
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
        for (Reason r : Reason.values())
            byReason.put(r.wireName(), outcome.corrections().getOrDefault(r, 0L));
    }
}
