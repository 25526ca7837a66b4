package dev.recount.reconcile;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.sets.Measure;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.reconcile.report.ReportWriter;
import java.util.List;
import java.util.Map;

/**
 * What {@code reconcile --json} prints: the facts of the text summary as one JSON object. The default set's keys and
 * totals stay at the top level, as before metric sets; every set reconciled is under {@code sets}, every set not
 * covered under {@code not_covered}. Every total is an exact JSON integer; a sum may exceed 2^63 and stays exact (a
 * {@link java.math.BigInteger}, never a double).
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
        SetResult def =
                r.sets().stream().filter(s -> s.set().isDefault()).findFirst().orElse(null);
        if (def != null) {
            json.set("keys", keys(def.comparison().range().counts()));
            json.set("totals", totals(def));
        }
        // With --dry-run these are what the run would have done; nothing was applied.
        json.put("keys_finalized", r.keysFinalized());
        json.put("values_corrected", r.valuesCorrected());
        json.set("corrections", byReason(r.corrections()));
        json.put("report", r.reportDir().resolve(ReportWriter.HTML).toString());
        ArrayNode names = json.putArray("metric_sets");
        r.sets().forEach(s -> names.add(s.name()));
        ObjectNode notCovered = json.putObject("not_covered");
        r.notCovered().forEach(notCovered::put);
        ObjectNode sets = json.putObject("sets");
        for (SetResult s : r.sets()) {
            ObjectNode o = sets.putObject(s.name());
            o.put("verdict", s.verdict().wireName());
            o.set("keys", keys(s.comparison().range().counts()));
            o.set("totals", totals(s));
            o.put("keys_finalized", s.keysFinalized());
            o.put("values_corrected", s.valuesCorrected());
            o.set("corrections", byReason(s.corrections()));
        }
        return json;
    }

    private static ObjectNode keys(KeyCounts k) {
        ObjectNode keys = JsonOutput.object();
        keys.put("compared", k.compared());
        keys.put("matched", k.matched());
        keys.put("mismatched", k.mismatched());
        keys.put("missing_in_stream", k.missingInStream());
        keys.put("missing_in_batch", k.missingInBatch());
        keys.put("beyond_tolerance", k.beyondTolerance());
        return keys;
    }

    private static ObjectNode totals(SetResult s) {
        ObjectNode totals = JsonOutput.object();
        GroupTotals t = s.comparison().range();
        List<Measure> measures = s.set().measures();
        for (int m = 0; m < measures.size(); m++) {
            ObjectNode measure = totals.putObject(measures.get(m).name());
            measure.put("stream", t.stream().get(m));
            measure.put("batch", t.batch().get(m));
            measure.put("final", s.finalTotals().get(m));
            measure.put("stream_minus_batch", t.difference(m));
        }
        return totals;
    }

    private static ObjectNode byReason(Map<CorrectionLogTable.Reason, Long> corrections) {
        ObjectNode n = JsonOutput.object();
        for (CorrectionLogTable.Reason reason : CorrectionLogTable.Reason.values()) {
            n.put(reason.wireName(), corrections.getOrDefault(reason, 0L));
        }
        return n;
    }
}
