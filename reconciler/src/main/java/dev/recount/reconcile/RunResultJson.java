package dev.recount.reconcile;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.metrics.Metric;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.reconcile.report.ReportWriter;

/**
 * What {@code reconcile --json} prints: the facts of the text summary as one JSON object. Every metric total is an
 * exact JSON integer; spend may exceed 2^63 micros and stays exact (a {@link java.math.BigInteger}, never a double).
 */
final class RunResultJson {
    private RunResultJson() {}

    static ObjectNode of(RunResult r) {
        ObjectNode json = JsonOutput.object();
        json.put("run_id", r.runId());
        json.put("scope", r.scope().label());
        json.put("from", r.scope().from().toString());
        json.put("to", r.scope().to().toString());
        json.put("verdict", r.verdict().wireName());
        json.put("dry_run", r.dryRun());
        KeyCounts k = r.comparison().range().counts();
        ObjectNode keys = json.putObject("keys");
        keys.put("compared", k.compared());
        keys.put("matched", k.matched());
        keys.put("mismatched", k.mismatched());
        keys.put("missing_in_stream", k.missingInStream());
        keys.put("missing_in_batch", k.missingInBatch());
        keys.put("beyond_tolerance", k.beyondTolerance());
        GroupTotals t = r.comparison().range();
        ObjectNode totals = json.putObject("totals");
        for (Metric m : Metric.values()) {
            ObjectNode metric = totals.putObject(m.column());
            metric.put("stream", t.stream().get(m));
            metric.put("batch", t.batch().get(m));
            metric.put("final", r.finalTotals().get(m));
            metric.put("stream_minus_batch", t.difference(m));
        }
        // With --dry-run these are what the run would have done; nothing was applied.
        json.put("keys_finalized", r.keysFinalized());
        json.put("values_corrected", r.valuesCorrected());
        ObjectNode corrections = json.putObject("corrections");
        for (CorrectionLogTable.Reason reason : CorrectionLogTable.Reason.values()) {
            corrections.put(reason.wireName(), r.corrections().getOrDefault(reason, 0L));
        }
        json.put("report", r.reportDir().resolve(ReportWriter.HTML).toString());
        return json;
    }
}
