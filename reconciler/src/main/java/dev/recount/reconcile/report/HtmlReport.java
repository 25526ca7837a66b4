package dev.recount.reconcile.report;

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
 * differences, the spend chart, the largest mismatches, keys missing on either side, campaign-days, corrections
 * applied, tolerances. The page is the template {@code report.mustache}; this class only turns a run's
 * {@link ReportData} into the plain strings it shows. Escaping is the template engine's: no value here is HTML.
 */
public final class HtmlReport {
    static final int CAMPAIGN_DAYS_SHOWN = 25;

    private HtmlReport() {}

    public static String render(ReportData d) {
        return render(d, List.of());
    }

    /** With {@code sections} (e.g. attribution) after the tolerances. */
    public static String render(ReportData d, List<ReportSection> sections) {
        return Templates.render(Templates.REPORT, view(d, sections));
    }

    // ---- what the template shows ------------------------------------------------------------------------------

    /** The page. {@code chart} and {@code sections} are fragments rendered from templates, the rest plain text. */
    public record Page(
            long runId,
            String label,
            String range,
            Long batchRunId,
            String generatedAt,
            boolean dryRun,
            VerdictView verdict,
            List<Card> cards,
            Head totalsHead,
            List<TotalRow> totals,
            CtrView ctr,
            String chart,
            RowsView<MismatchRow> mismatches,
            RowsView<MissingRow> missingInStream,
            RowsView<MissingRow> missingInBatch,
            CampaignDaysView campaignDays,
            CorrectionsView corrections,
            TolerancesView tolerances,
            List<String> sections) {}

    public record VerdictView(String cls, String badge, String text) {}

    public record Card(String label, String value, String cls) {}

    /** A table head; a text column is left-aligned, the others (numbers) right-aligned. */
    public record Head(List<Column> columns) {
        static Head of(String... labels) {
            List<Column> cs = new ArrayList<>();
            for (String l : labels) cs.add(l.startsWith("~") ? new Column(l.substring(1), true) : new Column(l, false));
            return new Head(cs);
        }
    }

    public record Column(String label, boolean text) {}

    public record TotalRow(
            String column,
            String label,
            String stream,
            String batch,
            String fin,
            boolean differs,
            String difference,
            String relative) {}

    public record CtrView(
            Head rangeHead,
            String stream,
            String fin,
            boolean differs,
            String difference,
            Head rowsHead,
            List<CtrRow> rows) {
        public boolean hasRows() {
            return !rows.isEmpty();
        }

        public int rowCount() {
            return rows.size();
        }
    }

    public record KeyView(String window, String campaign, String channel) {}

    public record CtrRow(
            KeyView key,
            String streamClicks,
            String finalClicks,
            String streamCtr,
            String finalCtr,
            String difference) {}

    /** "Showing the 25 largest of 40 keys, by spend." */
    public record Shown(boolean some, long shown, long total, String what, String order) {}

    /** A list of rows with its head and its "showing ..." line; empty rows show the template's "none" text. */
    public record RowsView<R>(Shown shown, Head head, List<R> rows) {
        public boolean hasRows() {
            return !rows.isEmpty();
        }
    }

    public record MismatchRow(
            KeyView key, String stream, String batch, String difference, String others, boolean within) {}

    public record MissingRow(
            KeyView key, String spend, long events, long impressions, long clicks, long conversions, boolean within) {}

    public record CampaignDaysView(long all, Shown shown, Head head, List<CampaignDayRow> rows) {
        public boolean hasRows() {
            return !rows.isEmpty();
        }
    }

    public record CampaignDayRow(
            String day,
            String campaign,
            long differing,
            long compared,
            String stream,
            String batch,
            String difference,
            String relative,
            long streamEvents,
            long batchEvents) {}

    public record CorrectionsView(boolean dryRun, String keys, String values, Head head, List<CorrectionRow> rows) {}

    public record CorrectionRow(String reason, long count, String meaning) {}

    public record TolerancesView(Head head, List<ToleranceRow> rows) {}

    /** @param micros the absolute tolerance in micro-units, shown next to spend's; null for the other metrics */
    public record ToleranceRow(String label, String relative, String absolute, String micros) {}

    static Page view(ReportData d, List<ReportSection> sections) {
        DateTimeFormatter when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(d.zone());
        String range = when.format(d.scope().from()) + " – "
                + when.format(d.scope().to()) + " (" + d.zone().getId() + ")";
        KeyCounts k = d.comparison().range().counts();
        List<Card> cards = List.of(
                card("Keys compared", k.compared(), ""),
                card("Matched", k.matched(), ""),
                card("Mismatched", k.mismatched(), k.mismatched() > 0 ? "warn" : ""),
                card("Missing in stream", k.missingInStream(), k.missingInStream() > 0 ? "warn" : ""),
                card("Missing in batch", k.missingInBatch(), k.missingInBatch() > 0 ? "warn" : ""),
                card("Beyond tolerance", k.beyondTolerance(), k.beyondTolerance() > 0 ? "bad" : ""),
                card(d.dryRun() ? "Values to correct" : "Values corrected", d.valuesCorrected(), ""));
        return new Page(
                d.runId(),
                d.scope().label(),
                range,
                d.scope().batchRunId(),
                DateTimeFormatter.ISO_INSTANT.format(d.generatedAt()),
                d.dryRun(),
                verdict(d, k),
                cards,
                Head.of(
                        "~Metric",
                        "Stream",
                        "Batch",
                        d.dryRun() ? "Final (if applied)" : "Final (served)",
                        "Stream − batch",
                        "Relative"),
                totals(d.comparison().range(), d.finalTotals()),
                ctr(d),
                SpendChart.render(d.comparison().windows(), d.zone()),
                mismatches(d.largestMismatches(), k.mismatched(), d.zone()),
                missing(d.largestMissingInStream(), k.missingInStream(), false, d.zone()),
                missing(d.largestMissingInBatch(), k.missingInBatch(), true, d.zone()),
                campaignDays(d.comparison().campaignDays()),
                corrections(d),
                tolerances(d.tolerances()),
                sections.stream().map(ReportSection::html).toList());
    }

    private static VerdictView verdict(ReportData d, KeyCounts k) {
        boolean within = d.verdict() == Verdict.WITHIN_TOLERANCE;
        String text;
        if (k.compared() == 0) {
            text = "Neither the stream nor the batch has any key in this range.";
        } else if (within) {
            text = k.differing() == 0
                    ? "Every one of the " + k.compared() + " keys matches exactly."
                    : k.differing() + " of " + k.compared() + " keys differ, all within the configured tolerances.";
        } else {
            text = k.beyondTolerance() + " of " + k.compared() + " keys differ by more than the configured tolerances.";
        }
        text += d.dryRun()
                ? " Applied, the batch values would become final for every key in the range."
                : " The batch values are now final for every key in the range.";
        return new VerdictView(within ? "ok" : "bad", within ? "Within tolerance" : "Beyond tolerance", text);
    }

    private static Card card(String label, long value, String cls) {
        return new Card(label, String.format(Locale.ROOT, "%,d", value), cls);
    }

    private static List<TotalRow> totals(GroupTotals t, WindowMetrics fin) {
        List<TotalRow> rows = new ArrayList<>();
        for (Metric m : Metric.values()) {
            BigInteger s = t.stream().get(m), b = t.batch().get(m);
            BigInteger diff = t.difference(m);
            rows.add(new TotalRow(
                    m.column(),
                    label(m),
                    value(m, s),
                    value(m, b),
                    value(m, fin.get(m)),
                    diff.signum() != 0,
                    signed(m, diff),
                    Money.relativePercent(s, b)));
        }
        return rows;
    }

    /**
     * Click-through rate of the range, stream vs final, and the keys whose CTR moved the most. CTR is the ratio of
     * the sums (never an average of per-window CTRs), exact to 12 decimals; shown as a percentage, every digit kept.
     */
    private static CtrView ctr(ReportData d) {
        BigDecimal stream = d.streamCtr(), fin = d.finalCtr();
        List<CtrRow> rows = new ArrayList<>();
        for (LargestCtrDiffs.Difference c : d.largestCtrDifferences()) {
            ReconciliationDiffsTable.Row r = c.row();
            rows.add(new CtrRow(
                    key(r, d.zone()),
                    r.stream().clicks() + " / " + r.stream().impressions(),
                    r.batch().clicks() + " / " + r.batch().impressions(),
                    percent(c.streamCtr()),
                    percent(c.finalCtr()),
                    points(c.difference())));
        }
        return new CtrView(
                Head.of("~", "Stream", d.dryRun() ? "Final (if applied)" : "Final (served)", "Final − stream"),
                percent(stream),
                percent(fin),
                stream != null && fin != null && stream.compareTo(fin) != 0,
                stream == null || fin == null ? "—" : points(fin.subtract(stream)),
                Head.of(
                        "~Window",
                        "~Campaign",
                        "~Channel",
                        "Clicks / impressions stream",
                        "Clicks / impressions final",
                        "CTR stream",
                        "CTR final",
                        "Final − stream"),
                rows);
    }

    /** A ratio as a percentage with every digit it has ("5.0000000000 %"); "—" for none. */
    static String percent(BigDecimal ratio) {
        return ratio == null ? "—" : ratio.movePointRight(2).toPlainString() + " %";
    }

    /** A difference of ratios in percentage points, signed. */
    static String points(BigDecimal diff) {
        String s = diff.movePointRight(2).toPlainString() + " pp";
        return diff.signum() > 0 ? "+" + s : s;
    }

    private static RowsView<MismatchRow> mismatches(List<ReconciliationDiffsTable.Row> rows, long total, ZoneId zone) {
        List<MismatchRow> out = new ArrayList<>();
        for (ReconciliationDiffsTable.Row r : rows) {
            List<String> others = new ArrayList<>();
            for (Metric m : Metric.values()) {
                if (m == Metric.SPEND_MICROS || r.difference(m).signum() == 0) continue;
                others.add(label(m).toLowerCase(Locale.ROOT) + " " + r.stream().get(m) + " → "
                        + r.batch().get(m));
            }
            out.add(new MismatchRow(
                    key(r, zone),
                    Money.grouped(r.stream().spendMicros()),
                    Money.grouped(r.batch().spendMicros()),
                    signed(Metric.SPEND_MICROS, r.difference(Metric.SPEND_MICROS)),
                    others.isEmpty() ? "—" : String.join(", ", others),
                    r.withinTolerance()));
        }
        return new RowsView<>(
                shown(rows.size(), total, "mismatched keys", "by spend difference"),
                Head.of(
                        "~Window",
                        "~Campaign",
                        "~Channel",
                        "Spend stream",
                        "Spend batch",
                        "Stream − batch",
                        "~Other differences (stream → batch)",
                        "~Tolerance"),
                out);
    }

    private static RowsView<MissingRow> missing(
            List<ReconciliationDiffsTable.Row> rows, long total, boolean streamSide, ZoneId zone) {
        List<MissingRow> out = new ArrayList<>();
        for (ReconciliationDiffsTable.Row r : rows) {
            WindowMetrics v = streamSide ? r.stream() : r.batch();
            out.add(new MissingRow(
                    key(r, zone),
                    Money.grouped(v.spendMicros()),
                    v.events(),
                    v.impressions(),
                    v.clicks(),
                    v.conversions(),
                    r.withinTolerance()));
        }
        return new RowsView<>(
                shown(rows.size(), total, "keys", "by spend"),
                Head.of(
                        "~Window",
                        "~Campaign",
                        "~Channel",
                        "Spend",
                        "Events",
                        "Impressions",
                        "Clicks",
                        "Conversions",
                        "~Tolerance"),
                out);
    }

    private static CampaignDaysView campaignDays(List<CampaignDayTotal> all) {
        List<CampaignDayTotal> differing = all.stream()
                .filter(c -> c.totals().counts().differing() > 0)
                .sorted(Comparator.comparing((CampaignDayTotal c) ->
                                c.totals().difference(Metric.SPEND_MICROS).abs())
                        .reversed()
                        .thenComparing(CampaignDayTotal::day)
                        .thenComparing(CampaignDayTotal::campaignId))
                .toList();
        List<CampaignDayRow> rows = new ArrayList<>();
        for (CampaignDayTotal c : differing.subList(0, Math.min(CAMPAIGN_DAYS_SHOWN, differing.size()))) {
            GroupTotals t = c.totals();
            rows.add(new CampaignDayRow(
                    c.day().toString(),
                    c.campaignId(),
                    t.counts().differing(),
                    t.counts().compared(),
                    Money.grouped(t.stream().spendMicros()),
                    Money.grouped(t.batch().spendMicros()),
                    signed(Metric.SPEND_MICROS, t.difference(Metric.SPEND_MICROS)),
                    Money.relativePercent(t.stream().spendMicros(), t.batch().spendMicros()),
                    t.stream().events(),
                    t.batch().events()));
        }
        return new CampaignDaysView(
                all.size(),
                shown(
                        rows.size(),
                        differing.size(),
                        "campaign-days with differences (of " + all.size() + ")",
                        "by spend difference"),
                Head.of(
                        "~Day",
                        "~Campaign",
                        "Keys differing",
                        "Spend stream",
                        "Spend batch",
                        "Stream − batch",
                        "Relative",
                        "Events stream",
                        "Events batch"),
                rows);
    }

    private static CorrectionsView corrections(ReportData d) {
        List<CorrectionRow> rows = new ArrayList<>();
        for (Reason r : Reason.values())
            rows.add(new CorrectionRow(r.wireName(), d.corrections().getOrDefault(r, 0L), meaning(r)));
        return new CorrectionsView(
                d.dryRun(),
                String.format(Locale.ROOT, "%,d", d.keysFinalized()),
                String.format(Locale.ROOT, "%,d", d.valuesCorrected()),
                Head.of("~Reason", d.dryRun() ? "Values to change" : "Values changed", "~Meaning"),
                rows);
    }

    private static TolerancesView tolerances(Tolerances t) {
        List<ToleranceRow> rows = new ArrayList<>();
        for (Metric m : Metric.values()) {
            Tolerances.Tolerance tol = t.of(m);
            rows.add(
                    m == Metric.SPEND_MICROS
                            ? new ToleranceRow(
                                    label(m),
                                    tol.relative().toPlainString(),
                                    Money.grouped(tol.absolute()),
                                    String.valueOf(tol.absolute()))
                            : new ToleranceRow(
                                    label(m), tol.relative().toPlainString(), String.valueOf(tol.absolute()), null));
        }
        return new TolerancesView(Head.of("~Metric", "Relative", "Absolute"), rows);
    }

    private static KeyView key(ReconciliationDiffsTable.Row r, ZoneId zone) {
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(zone);
        return new KeyView(
                fmt.format(Instant.ofEpochMilli(r.key().windowStartMillis())),
                r.key().campaignId(),
                r.key().channelId());
    }

    private static Shown shown(int shown, long total, String what, String order) {
        return new Shown(shown < total, shown, total, what, order);
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
        return m == Metric.SPEND_MICROS ? Money.grouped(v) : String.format(Locale.ROOT, "%,d", v);
    }

    private static String signed(Metric m, BigInteger v) {
        String s = value(m, v);
        return v.signum() > 0 ? "+" + s : s;
    }

    private static String meaning(Reason r) {
        return switch (r) {
            case STREAM_MISMATCH ->
                "Stream and batch both had the key with different values: the batch value replaced the stream value.";
            case MISSING_IN_STREAM -> "Only the batch had the key: it was added (before is empty).";
            case MISSING_IN_BATCH -> "Only the stream had the key: it was hidden (after is empty).";
            case BATCH_CHANGED -> "The key had been finalized by an earlier run and a newer batch result differs.";
        };
    }
}
