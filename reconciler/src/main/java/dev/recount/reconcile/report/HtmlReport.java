package dev.recount.reconcile.report;

import static dev.recount.reconcile.report.Html.escape;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison.CampaignDayTotal;
import dev.recount.reconcile.GroupTotals;
import dev.recount.reconcile.KeyCounts;
import dev.recount.reconcile.Tolerances;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * report.html: one self-contained page (inline CSS and SVG; no scripts, fonts or images from anywhere) for a
 * finance analyst. Order: verdict, totals stream vs batch vs final, CTR stream vs final with the largest CTR
 * differences, the spend chart, the largest mismatches,
 * keys missing on either side, campaign-days, corrections applied, tolerances. Every value from the data goes
 * through {@link Html#escape}.
 */
public final class HtmlReport {
    static final int CAMPAIGN_DAYS_SHOWN = 25;

    private HtmlReport() {}

    public static String render(ReportData d) {
        return render(d, List.of());
    }

    /** With {@code sections} (e.g. attribution) after the tolerances. */
    public static String render(ReportData d, List<ReportSection> sections) {
        DateTimeFormatter when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(d.zone());
        String range = when.format(d.scope().from()) + " – " + when.format(d.scope().to()) + " (" + d.zone().getId() + ")";
        KeyCounts k = d.comparison().range().counts();
        boolean within = d.verdict() == Verdict.WITHIN_TOLERANCE;

        StringBuilder h = new StringBuilder(64 * 1024);
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .append("<title>Reconciliation run ").append(d.runId()).append(" · ").append(escape(d.scope().label()))
                .append("</title><style>").append(CSS).append("</style></head><body><main>");

        h.append("<header><h1>Reconciliation report").append(d.dryRun() ? " (dry run)" : "")
                .append("</h1><p class=\"sub\">Run ").append(d.runId()).append(" · ")
                .append(escape(d.scope().label())).append(" · ").append(escape(range));
        if (d.scope().batchRunId() != null) h.append(" · batch run ").append(d.scope().batchRunId());
        h.append("<br>Generated ").append(escape(DateTimeFormatter.ISO_INSTANT.format(d.generatedAt())))
                .append(". Stream = what the real-time job computed; batch = the exact recomputation from the raw events,")
                .append(" which is authoritative; final = what <code>window_metrics</code> ")
                .append(d.dryRun() ? "would serve if this run were applied." : "now serves.").append("</p></header>");
        if (d.dryRun()) {
            h.append("<section class=\"dry\" id=\"dry-run\"><strong>Dry run: nothing was applied.</strong> The corrections")
                    .append(" below are what a reconciliation of this range would make now; <code>window_metrics</code>,")
                    .append(" <code>window_corrections</code> and the correction log are unchanged.</section>");
        }

        h.append("<section class=\"verdict ").append(within ? "ok" : "bad").append("\"><div class=\"badge\">")
                .append(within ? "Within tolerance" : "Beyond tolerance").append("</div><p>");
        if (k.compared() == 0) {
            h.append("Neither the stream nor the batch has any key in this range.");
        } else if (within) {
            h.append(k.differing() == 0 ? "Every one of the " + k.compared() + " keys matches exactly."
                    : k.differing() + " of " + k.compared() + " keys differ, all within the configured tolerances.");
        } else {
            h.append(k.beyondTolerance()).append(" of ").append(k.compared())
                    .append(" keys differ by more than the configured tolerances.");
        }
        h.append(d.dryRun() ? " Applied, the batch values would become final for every key in the range."
                : " The batch values are now final for every key in the range.").append("</p></section>");

        h.append("<section class=\"cards\">");
        card(h, "Keys compared", k.compared(), "");
        card(h, "Matched", k.matched(), "");
        card(h, "Mismatched", k.mismatched(), k.mismatched() > 0 ? "warn" : "");
        card(h, "Missing in stream", k.missingInStream(), k.missingInStream() > 0 ? "warn" : "");
        card(h, "Missing in batch", k.missingInBatch(), k.missingInBatch() > 0 ? "warn" : "");
        card(h, "Beyond tolerance", k.beyondTolerance(), k.beyondTolerance() > 0 ? "bad" : "");
        card(h, d.dryRun() ? "Values to correct" : "Values corrected", d.valuesCorrected(), "");
        h.append("</section>");

        totals(h, d.comparison().range(), d.finalTotals(), d.dryRun());
        ctr(h, d);

        h.append("<section><h2>Spend per window</h2>").append(SpendChart.render(d.comparison().windows(), d.zone()))
                .append("</section>");

        h.append("<section><h2>Largest mismatches</h2>");
        mismatches(h, d.largestMismatches(), k.mismatched(), d.zone());
        h.append("</section>");

        h.append("<section><h2>Missing in stream</h2><p class=\"muted\">Keys the batch recomputation found but the")
                .append(" real-time job never wrote (for example, events later than the allowed lateness). They now appear with the batch values.</p>");
        missing(h, d.largestMissingInStream(), k.missingInStream(), false, d.zone());
        h.append("</section><section><h2>Missing in batch</h2><p class=\"muted\">Keys the real-time job wrote but the")
                .append(" batch recomputation does not have (no valid events in the raw event lake). They are now hidden.</p>");
        missing(h, d.largestMissingInBatch(), k.missingInBatch(), true, d.zone());
        h.append("</section>");

        campaignDays(h, d.comparison().campaignDays());
        corrections(h, d);
        tolerances(h, d.tolerances());
        for (ReportSection section : sections) h.append(section.html());

        h.append("<footer>Files next to this report: <code>diffs.csv</code> (every key with any difference, then totals")
                .append(" per window, per campaign per day and for the range) and <code>summary.json</code>")
                .append(" (this summary, machine-readable). Spend is stored in micro-units; shown here in currency units")
                .append(" with six decimals, exactly.</footer>");
        h.append("</main></body></html>\n");
        return h.toString();
    }

    /** A table head; a column named with a leading "~" holds text (left-aligned), the others numbers. */
    private static void head(StringBuilder h, String... columns) {
        h.append("<thead><tr>");
        for (String c : columns) {
            if (c.startsWith("~")) h.append("<th class=\"text\">").append(escape(c.substring(1))).append("</th>");
            else h.append("<th>").append(escape(c)).append("</th>");
        }
        h.append("</tr></thead><tbody>");
    }

    private static void card(StringBuilder h, String label, long value, String cls) {
        h.append("<div class=\"card ").append(cls).append("\"><div class=\"n\">").append(String.format(Locale.ROOT, "%,d", value))
                .append("</div><div class=\"l\">").append(escape(label)).append("</div></div>");
    }

    private static void totals(StringBuilder h, GroupTotals t, WindowMetrics fin, boolean dryRun) {
        h.append("<section><h2>Totals for the range</h2><table class=\"num\">");
        head(h, "~Metric", "Stream", "Batch", dryRun ? "Final (if applied)" : "Final (served)", "Stream − batch", "Relative");
        for (Metric m : Metric.values()) {
            BigInteger s = t.stream().get(m), b = t.batch().get(m), f = fin.get(m);
            BigInteger diff = t.difference(m);
            h.append("<tr id=\"total-").append(m.column()).append("\"><th>").append(label(m)).append("</th><td>")
                    .append(value(m, s)).append("</td><td>").append(value(m, b)).append("</td><td>").append(value(m, f))
                    .append("</td><td class=\"").append(diff.signum() == 0 ? "" : "delta").append("\">").append(signed(m, diff))
                    .append("</td><td>").append(escape(Money.relativePercent(s, b))).append("</td></tr>");
        }
        h.append("</tbody></table></section>");
    }

    /**
     * Click-through rate of the range, stream vs final, and the keys whose CTR moved the most. CTR is the ratio of
     * the sums (never an average of per-window CTRs), exact to 12 decimals; shown as a percentage, every digit kept.
     */
    private static void ctr(StringBuilder h, ReportData d) {
        BigDecimal stream = d.streamCtr(), fin = d.finalCtr();
        h.append("<section id=\"ctr\"><h2>Click-through rate (CTR)</h2><p class=\"muted\">Clicks per impression:")
                .append(" total clicks divided by total impressions of the range (a ratio of sums, not an average of")
                .append(" per-window rates); empty where there are no impressions.</p><table class=\"num\">");
        head(h, "~", "Stream", d.dryRun() ? "Final (if applied)" : "Final (served)", "Final − stream");
        h.append("<tr id=\"ctr-range\"><th>CTR of the range</th><td>").append(percent(stream)).append("</td><td>")
                .append(percent(fin)).append("</td><td class=\"")
                .append(stream != null && fin != null && stream.compareTo(fin) != 0 ? "delta" : "").append("\">")
                .append(stream == null || fin == null ? "—" : points(fin.subtract(stream))).append("</td></tr>")
                .append("</tbody></table>");
        List<LargestCtrDiffs.Difference> rows = d.largestCtrDifferences();
        h.append("<h2>Largest CTR differences</h2>");
        if (rows.isEmpty()) {
            h.append("<p class=\"muted\">No mismatched key with impressions on both sides has a different CTR.</p></section>");
            return;
        }
        h.append("<p class=\"muted\">The ").append(rows.size()).append(" mismatched keys whose CTR differs the most")
                .append(" between stream and batch (final), by |final − stream|; keys missing on one side have no CTR there.</p>");
        h.append("<table class=\"num\">");
        head(h, "~Window", "~Campaign", "~Channel", "Clicks / impressions stream", "Clicks / impressions final",
                "CTR stream", "CTR final", "Final − stream");
        for (LargestCtrDiffs.Difference c : rows) {
            ReconciliationDiffsTable.Row r = c.row();
            h.append("<tr class=\"ctrrow\">");
            keyCells(h, r, d.zone());
            h.append("<td>").append(r.stream().clicks()).append(" / ").append(r.stream().impressions()).append("</td><td>")
                    .append(r.batch().clicks()).append(" / ").append(r.batch().impressions()).append("</td><td>")
                    .append(percent(c.streamCtr())).append("</td><td>").append(percent(c.finalCtr()))
                    .append("</td><td class=\"delta\">").append(points(c.difference())).append("</td></tr>");
        }
        h.append("</tbody></table></section>");
    }

    /** A ratio as a percentage with every digit it has ("5.0000000000 %"); "—" for none. */
    static String percent(BigDecimal ratio) {
        return ratio == null ? "—" : escape(ratio.movePointRight(2).toPlainString() + " %");
    }

    /** A difference of ratios in percentage points, signed. */
    static String points(BigDecimal diff) {
        String s = diff.movePointRight(2).toPlainString() + " pp";
        return escape(diff.signum() > 0 ? "+" + s : s);
    }

    private static void mismatches(StringBuilder h, List<ReconciliationDiffsTable.Row> rows, long total, ZoneId zone) {
        if (rows.isEmpty()) {
            h.append("<p class=\"muted\">No key has different values in stream and batch.</p>");
            return;
        }
        shown(h, rows.size(), total, "mismatched keys", "by spend difference");
        h.append("<table class=\"num\">");
        head(h, "~Window", "~Campaign", "~Channel", "Spend stream", "Spend batch", "Stream − batch",
                "~Other differences (stream → batch)", "~Tolerance");
        for (ReconciliationDiffsTable.Row r : rows) {
            h.append("<tr class=\"diffrow\">");
            keyCells(h, r, zone);
            h.append("<td>").append(escape(Money.grouped(r.stream().spendMicros()))).append("</td><td>")
                    .append(escape(Money.grouped(r.batch().spendMicros()))).append("</td><td class=\"delta\">")
                    .append(signed(Metric.SPEND_MICROS, r.difference(Metric.SPEND_MICROS))).append("</td><td class=\"text\">");
            List<String> others = new ArrayList<>();
            for (Metric m : Metric.values()) {
                if (m == Metric.SPEND_MICROS || r.difference(m).signum() == 0) continue;
                others.add(label(m).toLowerCase(Locale.ROOT) + " " + r.stream().get(m) + " → " + r.batch().get(m));
            }
            h.append(others.isEmpty() ? "—" : escape(String.join(", ", others))).append("</td>");
            tolerance(h, r);
            h.append("</tr>");
        }
        h.append("</tbody></table>");
    }

    private static void missing(StringBuilder h, List<ReconciliationDiffsTable.Row> rows, long total, boolean streamSide,
                                ZoneId zone) {
        if (rows.isEmpty()) {
            h.append("<p class=\"muted\">None.</p>");
            return;
        }
        shown(h, rows.size(), total, "keys", "by spend");
        h.append("<table class=\"num\">");
        head(h, "~Window", "~Campaign", "~Channel", "Spend", "Events", "Impressions", "Clicks", "Conversions", "~Tolerance");
        for (ReconciliationDiffsTable.Row r : rows) {
            WindowMetrics v = streamSide ? r.stream() : r.batch();
            h.append("<tr class=\"diffrow\">");
            keyCells(h, r, zone);
            h.append("<td>").append(escape(Money.grouped(v.spendMicros()))).append("</td><td>").append(v.events())
                    .append("</td><td>").append(v.impressions()).append("</td><td>").append(v.clicks()).append("</td><td>")
                    .append(v.conversions()).append("</td>");
            tolerance(h, r);
            h.append("</tr>");
        }
        h.append("</tbody></table>");
    }

    private static void campaignDays(StringBuilder h, List<CampaignDayTotal> all) {
        List<CampaignDayTotal> differing = all.stream().filter(c -> c.totals().counts().differing() > 0)
                .sorted(Comparator.comparing((CampaignDayTotal c) -> c.totals().difference(Metric.SPEND_MICROS).abs())
                        .reversed().thenComparing(CampaignDayTotal::day).thenComparing(CampaignDayTotal::campaignId))
                .toList();
        h.append("<section><h2>Campaigns per day</h2>");
        if (differing.isEmpty()) {
            h.append("<p class=\"muted\">All ").append(all.size()).append(" campaign-days match exactly.</p></section>");
            return;
        }
        List<CampaignDayTotal> rows = differing.subList(0, Math.min(CAMPAIGN_DAYS_SHOWN, differing.size()));
        shown(h, rows.size(), differing.size(), "campaign-days with differences (of " + all.size() + ")", "by spend difference");
        h.append("<table class=\"num\">");
        head(h, "~Day", "~Campaign", "Keys differing", "Spend stream", "Spend batch", "Stream − batch", "Relative",
                "Events stream", "Events batch");
        for (CampaignDayTotal c : rows) {
            GroupTotals t = c.totals();
            h.append("<tr><td class=\"text when\">").append(escape(c.day().toString())).append("</td><td class=\"text id\">")
                    .append(escape(c.campaignId())).append("</td><td>").append(t.counts().differing()).append(" / ")
                    .append(t.counts().compared()).append("</td><td>").append(escape(Money.grouped(t.stream().spendMicros())))
                    .append("</td><td>").append(escape(Money.grouped(t.batch().spendMicros()))).append("</td><td class=\"delta\">")
                    .append(signed(Metric.SPEND_MICROS, t.difference(Metric.SPEND_MICROS))).append("</td><td>")
                    .append(escape(Money.relativePercent(t.stream().spendMicros(), t.batch().spendMicros()))).append("</td><td>")
                    .append(t.stream().events()).append("</td><td>").append(t.batch().events()).append("</td></tr>");
        }
        h.append("</tbody></table></section>");
    }

    private static void corrections(StringBuilder h, ReportData d) {
        String keys = String.format(Locale.ROOT, "%,d", d.keysFinalized());
        String values = String.format(Locale.ROOT, "%,d", d.valuesCorrected());
        if (d.dryRun()) {
            h.append("<section><h2>Corrections this run would apply</h2><p>").append(keys)
                    .append(" keys would be finalized or changed in <code>window_corrections</code>; ").append(values)
                    .append(" served values would change and be appended to the correction log. Nothing was written.</p>");
        } else {
            h.append("<section><h2>Corrections applied</h2><p>").append(keys)
                    .append(" keys were finalized or changed in <code>window_corrections</code>; ").append(values)
                    .append(" served values changed and were appended to the correction log.</p>");
        }
        h.append("<table class=\"num\">");
        head(h, "~Reason", d.dryRun() ? "Values to change" : "Values changed", "~Meaning");
        for (Reason r : Reason.values()) {
            h.append("<tr><td class=\"text\"><code>").append(r.wireName()).append("</code></td><td class=\"n\">")
                    .append(d.corrections().getOrDefault(r, 0L)).append("</td><td class=\"text\">").append(meaning(r))
                    .append("</td></tr>");
        }
        h.append("</tbody></table></section>");
    }

    private static void tolerances(StringBuilder h, Tolerances t) {
        h.append("<section><h2>Tolerances</h2><p class=\"muted\">A key's metric is within tolerance when")
                .append(" |stream − batch| ≤ absolute, or ≤ relative × |batch|; a missing side counts as 0.</p>")
                .append("<table class=\"num\">");
        head(h, "~Metric", "Relative", "Absolute");
        for (Metric m : Metric.values()) {
            Tolerances.Tolerance tol = t.of(m);
            h.append("<tr><th>").append(label(m)).append("</th><td>").append(escape(tol.relative().toPlainString()))
                    .append("</td><td>").append(m == Metric.SPEND_MICROS
                            ? escape(Money.grouped(tol.absolute())) + " <span class=\"muted\">(" + tol.absolute() + " micros)</span>"
                            : String.valueOf(tol.absolute()))
                    .append("</td></tr>");
        }
        h.append("</tbody></table></section>");
    }

    private static void keyCells(StringBuilder h, ReconciliationDiffsTable.Row r, ZoneId zone) {
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(zone);
        h.append("<td class=\"text when\">").append(escape(fmt.format(Instant.ofEpochMilli(r.key().windowStartMillis()))))
                .append("</td><td class=\"text id\">").append(escape(r.key().campaignId()))
                .append("</td><td class=\"text id\">").append(escape(r.key().channelId())).append("</td>");
    }

    private static void tolerance(StringBuilder h, ReconciliationDiffsTable.Row r) {
        h.append(r.withinTolerance() ? "<td class=\"text okc\">within</td>" : "<td class=\"text badc\">beyond</td>");
    }

    private static void shown(StringBuilder h, int shown, long total, String what, String order) {
        h.append("<p class=\"muted\">").append(shown < total ? "Showing the " + shown + " largest of " + total + " " + escape(what)
                : "All " + total + " " + escape(what)).append(", ").append(escape(order))
                .append(". <code>diffs.csv</code> lists every one.</p>");
    }

    private static String label(Metric m) {
        return switch (m) {
            case IMPRESSIONS -> "Impressions";
            case CLICKS -> "Clicks";
            case CONVERSIONS -> "Conversions";
            case SPEND_MICROS -> "Spend";
            case EVENTS -> "Events";
        };
    }

    private static String value(Metric m, BigInteger v) {
        return m == Metric.SPEND_MICROS ? escape(Money.grouped(v)) : String.format(Locale.ROOT, "%,d", v);
    }

    private static String signed(Metric m, BigInteger v) {
        String s = value(m, v);
        return v.signum() > 0 ? "+" + s : s;
    }

    private static String meaning(Reason r) {
        return switch (r) {
            case STREAM_MISMATCH -> "Stream and batch both had the key with different values: the batch value replaced the stream value.";
            case MISSING_IN_STREAM -> "Only the batch had the key: it was added (before is empty).";
            case MISSING_IN_BATCH -> "Only the stream had the key: it was hidden (after is empty).";
            case BATCH_CHANGED -> "The key had been finalized by an earlier run and a newer batch result differs.";
        };
    }

    private static final String CSS = """
            :root{--ink:#1f2933;--muted:#616e7c;--line:#d9e2ec;--bg:#f5f7fa;--ok:#1f7a3d;--okbg:#e3f5e9;--bad:#b42318;\
            --badbg:#fde8e7;--warn:#a15c07;--stream:#2563eb;--batch:#ea580c}
            *{box-sizing:border-box}
            body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,\
            "Helvetica Neue",Arial,sans-serif}
            main{max-width:1100px;margin:0 auto;padding:24px}
            h1{margin:0 0 4px;font-size:24px}
            h2{font-size:17px;margin:0 0 10px}
            .sub{color:var(--muted);margin:0 0 16px}
            section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px}
            .verdict{display:flex;gap:16px;align-items:center}
            .verdict p{margin:0}
            .badge{font-weight:700;font-size:18px;padding:8px 14px;border-radius:6px;white-space:nowrap}
            .verdict.ok{border-color:var(--ok)} .verdict.ok .badge{background:var(--okbg);color:var(--ok)}
            .verdict.bad{border-color:var(--bad)} .verdict.bad .badge{background:var(--badbg);color:var(--bad)}
            .dry{border-color:var(--warn);background:#fff7e6;color:var(--warn)}
            .cards{display:grid;grid-template-columns:repeat(7,1fr);gap:10px;background:none;border:0;padding:0}
            .card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 12px}
            .card .n{font-size:20px;font-weight:700;font-variant-numeric:tabular-nums}
            .card .l{color:var(--muted);font-size:12px}
            .card.warn .n{color:var(--warn)} .card.bad .n{color:var(--bad)}
            table{border-collapse:collapse;width:100%}
            th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
            thead th{font-size:12px;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line)}
            table.num td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
            table.num th{text-align:right} table.num th.text,table.num tbody th{text-align:left}
            table.num td.text,td.text{text-align:left;white-space:normal}
            table.num td.when,td.when{white-space:nowrap}
            td.n{text-align:right}
            td.id{min-width:9em;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
            td.delta{color:var(--bad);font-weight:600}
            .okc{color:var(--ok)} .badc{color:var(--bad);font-weight:600}
            .muted{color:var(--muted)}
            code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
            svg.chart{width:100%;height:auto;display:block}
            svg .grid{stroke:#e4e7eb;stroke-width:1} svg .axis{stroke:#9aa5b1;stroke-width:1}
            svg .ylabel{font-size:11px;fill:var(--muted);text-anchor:end} svg .xlabel{font-size:11px;fill:var(--muted)}
            svg polyline{fill:none;stroke-linejoin:round}
            svg .batch{stroke:var(--batch);stroke-width:4;opacity:.55} svg .stream{stroke:var(--stream);stroke-width:1.6}
            svg .batch-dot{fill:var(--batch);opacity:.7} svg .stream-dot{fill:var(--stream)}
            svg .difftick{stroke:var(--bad);stroke-width:2}
            .caption{color:var(--muted);font-size:12px;margin:6px 0 0}
            .key{display:inline-block;width:14px;height:4px;margin:0 5px 2px 10px;vertical-align:middle}
            .key.stream{background:var(--stream)} .key.batch{background:var(--batch);opacity:.6;height:6px}
            .key.diff{background:var(--bad);width:3px;height:10px}
            footer{color:var(--muted);font-size:12px;margin:8px 2px 24px}
            @media (max-width:900px){.cards{grid-template-columns:repeat(3,1fr)}}
            @media print{body{background:#fff}section{break-inside:avoid}}
            """;
}
