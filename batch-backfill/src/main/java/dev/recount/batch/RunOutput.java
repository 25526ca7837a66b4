package dev.recount.batch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What a run prints and records: the summary line, the {@code --json} object and the per-set parts of {@code
 * batch_runs.details}. A run of the default set alone prints exactly what it did before metric sets; a run of other
 * sets names each with its own counts.
 */
final class RunOutput {
    static final ObjectMapper JSON = new ObjectMapper();
    /** Per set: the events left out because an attribute the set reads is invalid (details and --json). */
    static final String LEFT_OUT = "events_left_out_invalid_attributes";

    private RunOutput() {}

    /** {@code details.sets.<set>}, created empty if absent. */
    static ObjectNode setDetails(ObjectNode details, String set) {
        ObjectNode sets = details.has(BatchRunsTable.DETAILS_SETS)
                ? (ObjectNode) details.get(BatchRunsTable.DETAILS_SETS)
                : details.putObject(BatchRunsTable.DETAILS_SETS);
        return sets.has(set) ? (ObjectNode) sets.get(set) : sets.putObject(set);
    }

    /** Whether the run computed the default set alone: then its lines read exactly as before metric sets. */
    private static boolean defaultOnly(List<BackfillRunner.SetOutcome> sets) {
        return sets.size() == 1 && sets.get(0).set().equals(BatchRunsTable.DEFAULT_SET);
    }

    static String rangeSummary(BackfillRunner.RangeReport r) {
        StringBuilder s = new StringBuilder("run " + r.runId() + " (" + r.mode().wireName() + " " + r.range()
                + (r.forced() ? ", forced" : "") + "): " + r.events() + " events (" + r.lakeRows() + " lake rows)");
        if (defaultOnly(r.sets())) {
            BackfillRunner.SetOutcome d = r.sets().get(0);
            s.append(", ").append(rows(d)).append(',');
        } else {
            for (BackfillRunner.SetOutcome o : r.sets()) {
                s.append("; ").append(o.set()).append(": ").append(rows(o)).append(leftOut(o));
            }
            s.append(';');
        }
        return s.append(' ').append(seconds(r.elapsed())).toString();
    }

    static ObjectNode rangeJson(BackfillRunner.RangeReport r) {
        ObjectNode json = JsonOutput.object();
        json.put("run_id", r.runId());
        json.put("mode", r.mode().wireName());
        json.put("from", Instant.ofEpochMilli(r.range().fromMillis()).toString());
        json.put("to", Instant.ofEpochMilli(r.range().toMillis()).toString());
        json.put("forced", r.forced());
        json.put("events", r.events());
        json.put("lake_rows", r.lakeRows());
        json.put("window_rows_written", r.windowsWritten());
        json.put("window_rows_unchanged", r.windowsUnchanged());
        json.put("window_rows_deleted", r.windowsDeleted());
        setsJson(json, r.sets(), false);
        json.put("duration_ms", r.elapsed().toMillis());
        return json;
    }

    static String affectedSummary(BackfillRunner.AffectedReport r) {
        StringBuilder s =
                new StringBuilder("run " + r.runId() + " (affected): " + r.recordsRead() + " backfill records");
        if (defaultOnly(r.sets())) {
            s.append(", ").append(recomputed(r.sets().get(0))).append(", ");
        } else {
            for (BackfillRunner.SetOutcome o : r.sets()) {
                s.append("; ")
                        .append(o.set())
                        .append(": ")
                        .append(recomputed(o))
                        .append(leftOut(o));
            }
            s.append("; ");
        }
        s.append(seconds(r.elapsed()));
        if (r.pending() > 0)
            s.append("; ")
                    .append(r.pending())
                    .append(" records pending (not in the lake yet, beyond its completeness boundary, in a lake"
                            + " hour short of rows, or for a metric set this run did not compute), kept in"
                            + " backfill_waiting and checked again by every run");
        if (r.waiting().records() > r.pending())
            s.append("; ").append(r.waiting().records()).append(" records waiting in all");
        r.waiting()
                .oldestSinceMillis()
                .ifPresent(t -> s.append(", the oldest since ").append(Instant.ofEpochMilli(t)));
        if (r.malformed() > 0) s.append("; ").append(r.malformed()).append(" malformed records skipped");
        if (r.expired() > 0)
            s.append("; ")
                    .append(r.expired())
                    .append(" records for windows before the lake's retention horizon settled without a recompute");
        if (r.truncated()) s.append("; more records remain on the topic: run again");
        return s.toString();
    }

    static ObjectNode affectedJson(BackfillRunner.AffectedReport r) {
        ObjectNode json = JsonOutput.object();
        json.put("run_id", r.runId());
        json.put("mode", Mode.AFFECTED.wireName());
        ArrayNode starts = json.putArray("windows");
        r.windows().forEach(start -> starts.add(Instant.ofEpochMilli(start).toString()));
        json.put("records_read", r.recordsRead());
        json.put("events", r.events());
        json.put("window_rows_written", r.windowsWritten());
        json.put("window_rows_unchanged", r.windowsUnchanged());
        json.put("window_rows_deleted", r.windowsDeleted());
        setsJson(json, r.sets(), true);
        json.put("pending", r.pending());
        json.put("waiting", r.waiting().records());
        json.put(
                "oldest_waiting_since",
                r.waiting()
                        .oldestSinceMillis()
                        .map(t -> Instant.ofEpochMilli(t).toString())
                        .orElse(null));
        json.put("malformed", r.malformed());
        json.put("expired", r.expired());
        json.put("truncated", r.truncated());
        ObjectNode offsets = json.putObject("committed");
        r.committed().forEach(offsets::put);
        json.put("duration_ms", r.elapsed().toMillis());
        return json;
    }

    /** {@code metric_sets} (the names, in order) and {@code sets} (each one's counts) of a run's JSON. */
    private static void setsJson(ObjectNode json, List<BackfillRunner.SetOutcome> sets, boolean windows) {
        ArrayNode names = json.putArray("metric_sets");
        ObjectNode each = json.putObject("sets");
        for (BackfillRunner.SetOutcome o : sets) {
            names.add(o.set());
            ObjectNode n = each.putObject(o.set());
            if (windows) {
                ArrayNode starts = n.putArray("windows");
                o.windows()
                        .forEach(start -> starts.add(Instant.ofEpochMilli(start).toString()));
            }
            n.put("events", o.events());
            n.put(LEFT_OUT, o.leftOut());
            n.put("window_rows_written", o.written());
            n.put("window_rows_unchanged", o.unchanged());
            n.put("window_rows_deleted", o.deleted());
            if (o.attributionRows() != null) n.put("attribution_rows", o.attributionRows());
        }
    }

    private static String rows(BackfillRunner.SetOutcome o) {
        return o.written() + " window rows written, " + o.unchanged() + " unchanged, " + o.deleted() + " deleted";
    }

    private static String recomputed(BackfillRunner.SetOutcome o) {
        return o.windows().size() + " windows recomputed (" + o.events() + " events, " + rows(o) + ")";
    }

    private static String leftOut(BackfillRunner.SetOutcome o) {
        return o.leftOut() == 0 ? "" : ", " + o.leftOut() + " events left out (an attribute the set reads is invalid)";
    }

    static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
