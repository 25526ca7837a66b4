package dev.recount.reconcile.report;

import dev.recount.core.config.Durations;
import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.Tolerance;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison.DayTotal;
import dev.recount.reconcile.GroupTotals;
import dev.recount.reconcile.KeyCounts;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * report.html: one self-contained page (inline CSS and SVG; no scripts, fonts or images from anywhere) for a
 * finance analyst. A run of several metric sets opens with its verdict and a table of its sets, then gives each set
 * its own part under its name ({@code set.mustache}); a run of the default set alone reads as before metric sets.
 * A set's part, in order: verdict, totals stream vs batch vs final, its ratio stream vs final with the largest
 * differences (the default set: CTR), the chart of its lead measure per window (the default set: spend), the largest
 * mismatches, keys missing on either side, its first dimension per day, corrections applied, tolerances, attribution.
 * The page is the template {@code report.mustache}; this class only turns a run's {@link ReportData} into the plain
 * strings it shows. Escaping is the template engine's: no value here is HTML.
 */
public final class HtmlReport {
    static final int CAMPAIGN_DAYS_SHOWN = 25;

    private HtmlReport() {}

    public static String render(ReportData d) {
        return Templates.render(Templates.REPORT, view(d));
    }

    // ---- what the templates show ------------------------------------------------------------------------------

    /**
     * The page. Each set's {@code html} is a fragment rendered from {@code set.mustache}, the rest plain text; {@code
     * view} and {@code correctionsTable} name the only set's objects when {@code perSet} is false.
     */
    public record Page(
            long runId,
            String label,
            String range,
            Long batchRunId,
            String generatedAt,
            boolean dryRun,
            boolean perSet,
            String view,
            String correctionsTable,
            OverviewView overview,
            List<SetHtml> sets,
            List<FileItem> files,
            boolean money) {}

    /** One set's part of the page, rendered. */
    public record SetHtml(String html) {}

    /** A file next to the report; {@code separator} goes before it (", " but for the first). */
    public record FileItem(String separator, String file, String what) {}

    /** The run's verdict and a row per set, for a run of several sets. */
    public record OverviewView(VerdictView verdict, Head head, List<SetRow> rows) {}

    /** A set in the overview; {@code reconciled} false: {@code reason} says why not. */
    public record SetRow(
            String name,
            String dimensions,
            String window,
            boolean reconciled,
            String cls,
            String verdict,
            String compared,
            String differing,
            String beyond,
            String values,
            String reason) {}

    /** One set's part: what set.mustache shows. {@code heading} is null for the default set alone. */
    public record SetPage(
            Heading heading,
            String idPrefix,
            String correctionsTable,
            VerdictView verdict,
            List<Card> cards,
            Head totalsHead,
            List<TotalRow> totals,
            RatioView ratio,
            String chartTitle,
            String chart,
            RowsView<MismatchRow> mismatches,
            RowsView<MissingRow> missingInStream,
            RowsView<MissingRow> missingInBatch,
            DaysView days,
            CorrectionsView corrections,
            TolerancesView tolerances,
            List<String> sections,
            boolean dryRun) {}

    public record Heading(String name, String description) {}

    public record VerdictView(String cls, String badge, String text) {}

    public record Card(String label, String value, String cls) {}

    /** A table head; a text column is left-aligned, the others (numbers) right-aligned. */
    public record Head(List<Column> columns) {
        static Head of(String... labels) {
            return of(List.of(labels));
        }

        static Head of(List<String> labels) {
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

    /**
     * The set's ratio over the range, stream vs final, and the keys it moved most. {@code id} is the ratio's name
     * ("ctr"), {@code short} how the text names it ("CTR"), {@code denominator} the denominator in words.
     */
    public record RatioView(
            String id,
            String title,
            String shortName,
            String explanation,
            String denominator,
            Head rangeHead,
            String stream,
            String fin,
            boolean differs,
            String difference,
            Head rowsHead,
            List<RatioRow> rows) {
        public boolean hasRows() {
            return !rows.isEmpty();
        }

        public int rowCount() {
            return rows.size();
        }

        /** The template's {@code {{short}}}. */
        public String getShort() {
            return shortName;
        }
    }

    /** A key's window and its dimensions' values, in the set's order. */
    public record KeyView(String window, List<String> dimensions) {}

    public record RatioRow(
            KeyView key,
            String streamParts,
            String finalParts,
            String streamValue,
            String finalValue,
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

    /** A key one side lacks: its lead measure, its events, then its other measures, as the other side has them. */
    public record MissingRow(KeyView key, List<String> values, boolean within) {}

    public record DaysView(String title, String groups, long all, Shown shown, Head head, List<DayRow> rows) {
        public boolean hasRows() {
            return !rows.isEmpty();
        }
    }

    public record DayRow(
            String day,
            String value,
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

    /** @param micros the absolute tolerance in micro-units, shown next to a money measure's; null for the others */
    public record ToleranceRow(String label, String relative, String absolute, String micros) {}

    static Page view(ReportData d) {
        DateTimeFormatter when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(d.zone());
        String range = when.format(d.scope().from()) + " – "
                + when.format(d.scope().to()) + " (" + d.zone().getId() + ")";
        boolean perSet = d.perSet();
        List<SetHtml> sets = new ArrayList<>();
        List<FileItem> files = new ArrayList<>();
        boolean money = false;
        for (SetReport s : d.sets()) {
            sets.add(new SetHtml(Templates.render(Templates.SET, setView(s, d, perSet))));
            String what = "every key with any difference, then totals per window, per "
                    + Labels.word(s.set().dimensionNames().get(0)) + " per day and for the range";
            files.add(new FileItem(
                    files.isEmpty() ? "" : ", ", s.csvFile(), perSet ? "metric set " + s.name() + ": " + what : what));
            money |= s.set().measures().stream().anyMatch(Labels::isMoney);
        }
        SetTables only = d.sets().size() == 1 ? d.sets().get(0).tables() : null;
        return new Page(
                d.runId(),
                d.scope().label(),
                range,
                d.scope().batchRunId(),
                DateTimeFormatter.ISO_INSTANT.format(d.generatedAt()),
                d.dryRun(),
                perSet,
                only == null ? null : only.windowMetrics(),
                only == null ? null : only.windowCorrections(),
                perSet ? overview(d) : null,
                sets,
                files,
                money);
    }

    private static OverviewView overview(ReportData d) {
        boolean within = d.verdict() == Verdict.WITHIN_TOLERANCE;
        long beyond = d.sets().stream()
                .filter(s -> s.verdict() != Verdict.WITHIN_TOLERANCE)
                .count();
        String text = d.sets().size() + " metric set" + (d.sets().size() == 1 ? "" : "s") + " reconciled: "
                + (within
                        ? "every one within the configured tolerances."
                        : beyond + " with keys beyond the configured tolerances.");
        if (!d.notCovered().isEmpty()) {
            text += " " + d.notCovered().size() + " not reconciled: no succeeded batch run covers the range for "
                    + String.join(", ", d.notCovered().keySet()) + ".";
        }
        List<SetRow> rows = new ArrayList<>();
        for (SetReport s : d.sets()) {
            KeyCounts k = s.comparison().range().counts();
            boolean ok = s.verdict() == Verdict.WITHIN_TOLERANCE;
            rows.add(new SetRow(
                    s.name(),
                    Labels.dimensionWords(s.set()),
                    Durations.format(s.set().window()),
                    true,
                    ok ? "okc" : "badc",
                    ok ? "within" : "beyond",
                    grouped(k.compared()),
                    grouped(k.differing()),
                    grouped(k.beyondTolerance()),
                    grouped(s.valuesCorrected()),
                    null));
        }
        for (Map.Entry<String, String> e : d.notCovered().entrySet()) {
            rows.add(new SetRow(e.getKey(), "", "", false, null, null, null, null, null, null, e.getValue()));
        }
        return new OverviewView(
                new VerdictView(within ? "ok" : "bad", within ? "Within tolerance" : "Beyond tolerance", text),
                Head.of(
                        "~Set",
                        "~Dimensions",
                        "~Window",
                        "~Verdict",
                        "Keys compared",
                        "Differing",
                        "Beyond tolerance",
                        d.dryRun() ? "Values to correct" : "Values corrected"),
                rows);
    }

    static SetPage setView(SetReport s, ReportData d, boolean perSet) {
        MetricSet set = s.set();
        SetTables tables = s.tables();
        int lead = Labels.lead(set);
        Measure leadMeasure = set.measures().get(lead);
        KeyCounts k = s.comparison().range().counts();
        List<Card> cards = List.of(
                card("Keys compared", k.compared(), ""),
                card("Matched", k.matched(), ""),
                card("Mismatched", k.mismatched(), k.mismatched() > 0 ? "warn" : ""),
                card("Missing in stream", k.missingInStream(), k.missingInStream() > 0 ? "warn" : ""),
                card("Missing in batch", k.missingInBatch(), k.missingInBatch() > 0 ? "warn" : ""),
                card("Beyond tolerance", k.beyondTolerance(), k.beyondTolerance() > 0 ? "bad" : ""),
                card(d.dryRun() ? "Values to correct" : "Values corrected", s.valuesCorrected(), ""));
        String idPrefix = Labels.idPrefix(set);
        return new SetPage(
                perSet
                        ? new Heading(
                                set.name(),
                                "Per " + Labels.dimensionWords(set) + " and " + Durations.format(set.window())
                                        + " window; served by " + tables.windowMetrics() + ".")
                        : null,
                idPrefix,
                tables.windowCorrections(),
                verdict(s, d.dryRun(), k),
                cards,
                Head.of(
                        "~Metric",
                        "Stream",
                        "Batch",
                        d.dryRun() ? "Final (if applied)" : "Final (served)",
                        "Stream − batch",
                        "Relative"),
                totals(set, s.comparison().range(), s.finalTotals()),
                ratio(s, d),
                Labels.label(leadMeasure),
                WindowChart.render(set, lead, s.comparison().windows(), d.zone(), idPrefix),
                mismatches(set, lead, s.largestMismatches(), k.mismatched(), d.zone()),
                missing(set, lead, s.largestMissingInStream(), k.missingInStream(), false, d.zone()),
                missing(set, lead, s.largestMissingInBatch(), k.missingInBatch(), true, d.zone()),
                days(set, lead, s.comparison().days()),
                corrections(s, d.dryRun()),
                tolerances(set),
                s.sections().stream().map(ReportSection::html).toList(),
                d.dryRun());
    }

    private static VerdictView verdict(SetReport s, boolean dryRun, KeyCounts k) {
        boolean within = s.verdict() == Verdict.WITHIN_TOLERANCE;
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
        text += dryRun
                ? " Applied, the batch values would become final for every key in the range."
                : " The batch values are now final for every key in the range.";
        return new VerdictView(within ? "ok" : "bad", within ? "Within tolerance" : "Beyond tolerance", text);
    }

    private static Card card(String label, long value, String cls) {
        return new Card(label, grouped(value), cls);
    }

    private static String grouped(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    private static List<TotalRow> totals(MetricSet set, GroupTotals t, MeasureValues fin) {
        List<TotalRow> rows = new ArrayList<>();
        List<Measure> ms = set.measures();
        for (int i = 0; i < ms.size(); i++) {
            Measure m = ms.get(i);
            BigInteger s = t.stream().get(i), b = t.batch().get(i);
            BigInteger diff = t.difference(i);
            rows.add(new TotalRow(
                    m.name(),
                    Labels.label(m),
                    Format.value(m, s),
                    Format.value(m, b),
                    Format.value(m, fin.get(i)),
                    diff.signum() != 0,
                    Format.signed(m, diff),
                    Money.relativePercent(s, b)));
        }
        return rows;
    }

    /**
     * The set's ratio over the range, stream vs final, and the keys it moved the most: the ratio of the sums (never
     * an average of per-window ratios), exact to 12 decimals; a count per count (a CTR) as a percentage, every digit
     * kept. Null for a set without ratios.
     */
    private static RatioView ratio(SetReport s, ReportData d) {
        DerivedRatio r = s.ratio();
        if (r == null) return null;
        MetricSet set = s.set();
        boolean percent = Labels.isPercentage(set, r);
        int num = set.measureIndex(r.numerator()), den = set.measureIndex(r.denominator());
        Measure numerator = set.measures().get(num),
                denominator = set.measures().get(den);
        String numWords = Labels.label(numerator).toLowerCase(Locale.ROOT);
        String denWords = Labels.label(denominator).toLowerCase(Locale.ROOT);
        String explanation = (r.per() == 1
                        ? Labels.label(numerator) + " per " + Labels.singular(denWords) + ": total " + numWords
                                + " divided by total " + denWords
                        : Labels.label(numerator) + " per " + r.per() + " " + denWords + ": " + r.per() + " × total "
                                + numWords + " divided by total " + denWords)
                + " of the range (a ratio of sums, not an average of per-window rates); empty where there are no "
                + denWords + ".";
        BigDecimal stream = s.streamRatio(), fin = s.finalRatio();
        List<RatioRow> rows = new ArrayList<>();
        for (LargestRatioDiffs.Difference c : s.largestRatioDifferences()) {
            ReconciliationDiffsTable.Row row = c.row();
            rows.add(new RatioRow(
                    key(row, d.zone()),
                    row.stream().get(num) + " / " + row.stream().get(den),
                    row.batch().get(num) + " / " + row.batch().get(den),
                    ratioValue(c.streamValue(), percent),
                    ratioValue(c.finalValue(), percent),
                    ratioDifference(c.difference(), percent)));
        }
        String shortName = Labels.ratioShort(r);
        String parts = Labels.label(numerator) + " / " + denWords;
        List<String> head = keyHead(set);
        head.addAll(List.of(
                parts + " stream", parts + " final", shortName + " stream", shortName + " final", "Final − stream"));
        return new RatioView(
                r.name(),
                Labels.ratioTitle(r),
                shortName,
                explanation,
                denWords,
                Head.of("~", "Stream", d.dryRun() ? "Final (if applied)" : "Final (served)", "Final − stream"),
                ratioValue(stream, percent),
                ratioValue(fin, percent),
                stream != null && fin != null && stream.compareTo(fin) != 0,
                stream == null || fin == null ? "—" : ratioDifference(fin.subtract(stream), percent),
                Head.of(head),
                rows);
    }

    private static String ratioValue(BigDecimal v, boolean percent) {
        if (v == null) return "—";
        return percent ? percent(v) : v.toPlainString();
    }

    private static String ratioDifference(BigDecimal diff, boolean percent) {
        if (percent) return points(diff);
        String s = diff.toPlainString();
        return diff.signum() > 0 ? "+" + s : s;
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

    /** The key columns' heads: the window, then each dimension ("Campaign", "Channel"). */
    private static List<String> keyHead(MetricSet set) {
        List<String> head = new ArrayList<>();
        head.add("~Window");
        for (String dim : set.dimensionNames()) head.add("~" + Labels.title(dim));
        return head;
    }

    private static RowsView<MismatchRow> mismatches(
            MetricSet set, int lead, List<ReconciliationDiffsTable.Row> rows, long total, ZoneId zone) {
        List<Measure> ms = set.measures();
        Measure leadMeasure = ms.get(lead);
        List<MismatchRow> out = new ArrayList<>();
        for (ReconciliationDiffsTable.Row r : rows) {
            List<String> others = new ArrayList<>();
            for (int m = 0; m < ms.size(); m++) {
                if (m == lead || r.difference(m).signum() == 0) continue;
                others.add(Labels.label(ms.get(m)).toLowerCase(Locale.ROOT) + " "
                        + r.stream().get(m) + " → " + r.batch().get(m));
            }
            out.add(new MismatchRow(
                    key(r, zone),
                    Format.value(leadMeasure, r.stream().get(lead)),
                    Format.value(leadMeasure, r.batch().get(lead)),
                    Format.signed(leadMeasure, r.difference(lead)),
                    others.isEmpty() ? "—" : String.join(", ", others),
                    r.withinTolerance()));
        }
        String label = Labels.label(leadMeasure);
        List<String> head = keyHead(set);
        head.addAll(List.of(
                label + " stream",
                label + " batch",
                "Stream − batch",
                "~Other differences (stream → batch)",
                "~Tolerance"));
        return new RowsView<>(
                shown(rows.size(), total, "mismatched keys", "by " + label.toLowerCase(Locale.ROOT) + " difference"),
                Head.of(head),
                out);
    }

    /** The order of a missing key's values: the lead measure, events, then the others in the set's order. */
    private static List<Integer> missingOrder(MetricSet set, int lead) {
        List<Integer> order = new ArrayList<>(List.of(lead));
        int events = set.eventsIndex();
        if (events != lead) order.add(events);
        for (int m = 0; m < set.measures().size(); m++) if (!order.contains(m)) order.add(m);
        return order;
    }

    private static RowsView<MissingRow> missing(
            MetricSet set,
            int lead,
            List<ReconciliationDiffsTable.Row> rows,
            long total,
            boolean streamSide,
            ZoneId zone) {
        List<Integer> order = missingOrder(set, lead);
        Measure leadMeasure = set.measures().get(lead);
        List<MissingRow> out = new ArrayList<>();
        for (ReconciliationDiffsTable.Row r : rows) {
            MeasureValues v = streamSide ? r.stream() : r.batch();
            List<String> values = new ArrayList<>();
            for (int m : order) {
                values.add(
                        m == lead && Labels.isMoney(leadMeasure)
                                ? Money.grouped(v.get(m))
                                : v.get(m).toString());
            }
            out.add(new MissingRow(key(r, zone), values, r.withinTolerance()));
        }
        List<String> head = keyHead(set);
        for (int m : order) head.add(Labels.label(set.measures().get(m)));
        head.add("~Tolerance");
        return new RowsView<>(
                shown(
                        rows.size(),
                        total,
                        "keys",
                        "by " + Labels.label(leadMeasure).toLowerCase(Locale.ROOT)),
                Head.of(head),
                out);
    }

    private static DaysView days(MetricSet set, int lead, List<DayTotal> all) {
        Measure leadMeasure = set.measures().get(lead);
        int events = set.eventsIndex();
        String dimension = set.dimensionNames().get(0);
        String word = Labels.word(dimension);
        List<DayTotal> differing = all.stream()
                .filter(c -> c.totals().counts().differing() > 0)
                .sorted(Comparator.comparing(
                                (DayTotal c) -> c.totals().difference(lead).abs())
                        .reversed()
                        .thenComparing(DayTotal::day)
                        .thenComparing(DayTotal::value))
                .toList();
        List<DayRow> rows = new ArrayList<>();
        for (DayTotal c : differing.subList(0, Math.min(CAMPAIGN_DAYS_SHOWN, differing.size()))) {
            GroupTotals t = c.totals();
            rows.add(new DayRow(
                    c.day().toString(),
                    c.value(),
                    t.counts().differing(),
                    t.counts().compared(),
                    Format.value(leadMeasure, t.stream().get(lead)),
                    Format.value(leadMeasure, t.batch().get(lead)),
                    Format.signed(leadMeasure, t.difference(lead)),
                    Money.relativePercent(t.stream().get(lead), t.batch().get(lead)),
                    t.stream().count(events),
                    t.batch().count(events)));
        }
        String label = Labels.label(leadMeasure);
        String groups = Labels.dayGroup(set) + "s";
        return new DaysView(
                Labels.capitalize(Labels.plural(word.replace('_', ' '))),
                groups,
                all.size(),
                shown(
                        rows.size(),
                        differing.size(),
                        groups + " with differences (of " + all.size() + ")",
                        "by " + label.toLowerCase(Locale.ROOT) + " difference"),
                Head.of(
                        "~Day",
                        "~" + Labels.title(dimension),
                        "Keys differing",
                        label + " stream",
                        label + " batch",
                        "Stream − batch",
                        "Relative",
                        "Events stream",
                        "Events batch"),
                rows);
    }

    private static CorrectionsView corrections(SetReport s, boolean dryRun) {
        List<CorrectionRow> rows = new ArrayList<>();
        for (Reason r : Reason.values())
            rows.add(new CorrectionRow(r.wireName(), s.corrections().getOrDefault(r, 0L), meaning(r)));
        return new CorrectionsView(
                dryRun,
                grouped(s.keysFinalized()),
                grouped(s.valuesCorrected()),
                Head.of("~Reason", dryRun ? "Values to change" : "Values changed", "~Meaning"),
                rows);
    }

    private static TolerancesView tolerances(MetricSet set) {
        List<ToleranceRow> rows = new ArrayList<>();
        for (Measure m : set.measures()) {
            Tolerance tol = set.tolerance(m.name());
            rows.add(
                    Labels.isMoney(m)
                            ? new ToleranceRow(
                                    Labels.label(m),
                                    tol.relative().toPlainString(),
                                    Money.grouped(tol.absolute()),
                                    String.valueOf(tol.absolute()))
                            : new ToleranceRow(
                                    Labels.label(m),
                                    tol.relative().toPlainString(),
                                    String.valueOf(tol.absolute()),
                                    null));
        }
        return new TolerancesView(Head.of("~Metric", "Relative", "Absolute"), rows);
    }

    private static KeyView key(ReconciliationDiffsTable.Row r, ZoneId zone) {
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(zone);
        return new KeyView(
                fmt.format(Instant.ofEpochMilli(r.key().windowStartMillis())),
                r.key().dimensions());
    }

    private static Shown shown(int shown, long total, String what, String order) {
        return new Shown(shown < total, shown, total, what, order);
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
