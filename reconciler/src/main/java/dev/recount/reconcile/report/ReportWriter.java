package dev.recount.reconcile.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.Tolerance;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.reconcile.Comparison;
import dev.recount.reconcile.GroupTotals;
import dev.recount.reconcile.KeyCounts;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes a run's report files: report.html, one diffs file per metric set ({@code diffs.csv} for the default set,
 * {@code diffs-<set>.csv} for any other) and summary.json.
 */
public final class ReportWriter {
    public static final String HTML = "report.html";
    public static final String CSV = SetReport.DEFAULT_CSV;
    public static final String JSON = "summary.json";

    /** Decimals (the ratios) are written with every digit and never in exponent notation (1E-12). */
    private static final ObjectMapper JSON_MAPPER = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(com.fasterxml.jackson.core.JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

    /** Streams every diff of a set's run, in key order (from the database, without holding them all). */
    @FunctionalInterface
    public interface DiffSource {
        void forEach(Consumer<ReconciliationDiffsTable.Row> sink) throws SQLException;
    }

    /** The diffs of each set of the run. */
    @FunctionalInterface
    public interface DiffSources {
        DiffSource of(MetricSet set);
    }

    private ReportWriter() {}

    /**
     * Prepares, without any run's data and writing nothing, what writing a report needs the first time in a JVM: the
     * templates compiled and rendered once empty, the JSON and CSV writers' classes loaded and used once (with one of
     * the run's sets, {@code set}). A command
     * line run is a JVM of its own, where that is about 0.4 s of a report's first 0.9–1.3 s on the benchmark's day
     * (docs/benchmarks.md §10); a run does it on a thread of its own while PostgreSQL compares. Harmless twice, or
     * beside a report being written.
     */
    public static void preload(MetricSet set) {
        Templates.preload();
        try {
            JSON_MAPPER.writeValueAsString(JSON_MAPPER.createObjectNode().put("preload", true));
            new Csv(new StringBuilder()).row(csvHeader(set));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes the files into {@code dir}. Each set's diffs are read once: into its diffs file, and into the largest
     * differences per status ({@code top} of each) that report.html and summary.json show, so the sets' own lists are
     * ignored. Returns {@code data} with those lists.
     */
    public static ReportData write(Path dir, ReportData data, int top, DiffSources diffs)
            throws IOException, SQLException {
        Files.createDirectories(dir);
        List<SetReport> sets = new ArrayList<>();
        for (SetReport s : data.sets()) {
            LargestDiffs largest = new LargestDiffs(s.set(), top);
            LargestRatioDiffs largestRatio = new LargestRatioDiffs(s.set(), s.ratio(), top);
            DiffSource source = diffs.of(s.set());
            try (BufferedWriter out = Files.newBufferedWriter(dir.resolve(s.csvFile()), StandardCharsets.UTF_8)) {
                writeCsv(
                        out,
                        data.zone(),
                        s,
                        data.scope().from(),
                        data.scope().to(),
                        sink -> source.forEach(row -> {
                            largest.accept(row);
                            largestRatio.accept(row);
                            sink.accept(row);
                        }));
            }
            sets.add(s.withLargest(
                    largest.of(ReconciliationDiffsTable.Status.MISMATCH),
                    largest.of(ReconciliationDiffsTable.Status.MISSING_IN_STREAM),
                    largest.of(ReconciliationDiffsTable.Status.MISSING_IN_BATCH),
                    largestRatio.largest()));
        }
        ReportData full = data.withSets(sets);
        Files.writeString(dir.resolve(HTML), HtmlReport.render(full), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(JSON), summaryJson(full), StandardCharsets.UTF_8);
        return full;
    }

    // ---- the diffs files ----------------------------------------------------------------------------------------

    /**
     * Header of a set's diffs file: what a row is, its key or group (window, day, the set's dimensions), its
     * classification, then per measure the values, then each money measure in currency units.
     */
    public static List<String> csvHeader(MetricSet set) {
        List<String> h = new ArrayList<>(List.of("row_type", "window_start", "window_end", "day"));
        h.addAll(set.dimensionNames());
        h.addAll(List.of(
                "status",
                "within_tolerance",
                "stream_revision",
                "keys",
                "keys_matched",
                "keys_mismatched",
                "keys_missing_in_stream",
                "keys_missing_in_batch",
                "keys_beyond_tolerance"));
        for (Measure m : set.measures()) {
            String c = m.name();
            h.addAll(List.of("stream_" + c, "batch_" + c, "diff_" + c, "relative_diff_" + c));
        }
        for (Measure m : set.measures()) {
            if (!Labels.isMoney(m)) continue;
            String w = Labels.moneyWord(m);
            h.addAll(List.of("stream_" + w, "batch_" + w, "diff_" + w));
        }
        return h;
    }

    /** The row type of a per-day total of the set's first dimension: {@code campaign_day_total} for the default set. */
    static String dayTotalType(MetricSet set) {
        return Labels.word(set.dimensionNames().get(0)) + "_day_total";
    }

    static void writeCsv(Writer out, ZoneId zone, SetReport s, Instant from, Instant to, DiffSource diffs)
            throws IOException, SQLException {
        MetricSet set = s.set();
        int dimensions = set.dimensionNames().size();
        Csv csv = new Csv(out);
        csv.row(csvHeader(set));
        // The diffs come in key order, window by window: a window's start, end and day are written once per window.
        WindowCells window = new WindowCells(zone);
        try {
            diffs.forEach(r -> {
                try {
                    window.of(r.key().windowStartMillis(), r.windowEndMillis());
                    List<String> row = new ArrayList<>(List.of("key", window.start, window.end, window.day));
                    for (int d = 0; d < dimensions; d++)
                        row.add(Csv.text(r.key().dimension(d)));
                    row.addAll(List.of(
                            r.status().wireName(),
                            String.valueOf(r.withinTolerance()),
                            r.streamRevision() == null ? "" : r.streamRevision().toString(),
                            "",
                            "",
                            "",
                            "",
                            "",
                            ""));
                    MeasureValues zeros = MeasureValues.zeros(set.measures().size());
                    measureCells(
                            set,
                            row,
                            r.stream() == null ? zeros : r.stream(),
                            r.batch() == null ? zeros : r.batch(),
                            r.stream() == null,
                            r.batch() == null);
                    csv.row(row);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        List<String> noDimensions = new ArrayList<>();
        for (int d = 0; d < dimensions; d++) noDimensions.add("");
        for (Comparison.WindowTotal w : s.comparison().windows()) {
            totalRow(
                    csv,
                    set,
                    "window_total",
                    Instant.ofEpochMilli(w.windowStartMillis()).toString(),
                    Instant.ofEpochMilli(w.windowEndMillis()).toString(),
                    Instant.ofEpochMilli(w.windowStartMillis())
                            .atZone(zone)
                            .toLocalDate()
                            .toString(),
                    noDimensions,
                    w.totals());
        }
        String dayTotal = dayTotalType(set);
        for (Comparison.DayTotal c : s.comparison().days()) {
            List<String> first = new ArrayList<>(noDimensions);
            first.set(0, Csv.text(c.value()));
            totalRow(csv, set, dayTotal, "", "", c.day().toString(), first, c.totals());
        }
        totalRow(
                csv,
                set,
                "range_total",
                from.toString(),
                to.toString(),
                "",
                noDimensions,
                s.comparison().range());
        csv.flush();
    }

    /** The start, end and day cells of the last window written, computed again only when the window changes. */
    private static final class WindowCells {
        private final ZoneId zone;
        private long startMillis = Long.MIN_VALUE, endMillis = Long.MIN_VALUE;
        private String start, end, day;

        WindowCells(ZoneId zone) {
            this.zone = zone;
        }

        void of(long windowStartMillis, long windowEndMillis) {
            if (windowStartMillis != startMillis || start == null) {
                Instant s = Instant.ofEpochMilli(windowStartMillis);
                start = s.toString();
                day = s.atZone(zone).toLocalDate().toString();
                startMillis = windowStartMillis;
            }
            if (windowEndMillis != endMillis || end == null) {
                end = Instant.ofEpochMilli(windowEndMillis).toString();
                endMillis = windowEndMillis;
            }
        }
    }

    private static void totalRow(
            Csv csv,
            MetricSet set,
            String type,
            String start,
            String end,
            String day,
            List<String> dimensions,
            GroupTotals t)
            throws IOException {
        KeyCounts k = t.counts();
        List<String> row = new ArrayList<>(List.of(type, start, end, day));
        row.addAll(dimensions);
        row.addAll(List.of(
                "",
                String.valueOf(k.beyondTolerance() == 0),
                "",
                String.valueOf(k.compared()),
                String.valueOf(k.matched()),
                String.valueOf(k.mismatched()),
                String.valueOf(k.missingInStream()),
                String.valueOf(k.missingInBatch()),
                String.valueOf(k.beyondTolerance())));
        measureCells(set, row, t.stream(), t.batch(), false, false);
        csv.row(row);
    }

    /** A missing side's values are left empty (not 0); its difference counts it as 0. */
    private static void measureCells(
            MetricSet set, List<String> row, MeasureValues s, MeasureValues b, boolean noStream, boolean noBatch) {
        List<Measure> measures = set.measures();
        for (int m = 0; m < measures.size(); m++) {
            BigInteger sv = s.get(m), bv = b.get(m);
            long sl = sv.longValue(), bl = bv.longValue(), dl = sl - bl;
            if (sv.bitLength() < 64 && bv.bitLength() < 64 && ((sl ^ bl) & (sl ^ dl)) >= 0) {
                // Counts, and sums that fit a long (nearly all), in long arithmetic: the same digits without the
                // BigIntegers (several per cell, on every row of the diffs file).
                row.add(noStream ? "" : Long.toString(sl));
                row.add(noBatch ? "" : Long.toString(bl));
                row.add(Long.toString(dl));
                row.add(Csv.number(Money.relative(sl, bl)));
            } else {
                row.add(noStream ? "" : Csv.number(sv.toString()));
                row.add(noBatch ? "" : Csv.number(bv.toString()));
                row.add(Csv.number(sv.subtract(bv).toString()));
                row.add(Csv.number(Money.relative(sv, bv)));
            }
        }
        for (int m = 0; m < measures.size(); m++) {
            if (!Labels.isMoney(measures.get(m))) continue;
            row.add(noStream ? "" : Csv.number(Money.units(s.get(m))));
            row.add(noBatch ? "" : Csv.number(Money.units(b.get(m))));
            row.add(Csv.number(Money.units(s.get(m).subtract(b.get(m)))));
        }
    }

    // ---- summary.json and the run row's totals ---------------------------------------------------------------

    /**
     * The totals stored in {@code reconciliation_runs.totals}: stream, batch and final per measure of the default
     * set at the top (as before metric sets), and per set reconciled its verdict, keys and totals; the sets not
     * covered with why.
     */
    public static String totalsJson(ReportData d) {
        ObjectNode n = JSON_MAPPER.createObjectNode();
        SetReport def = d.defaultSet();
        if (def != null) {
            n.set("stream", measures(def.set(), def.comparison().range().stream()));
            n.set("batch", measures(def.set(), def.comparison().range().batch()));
            n.set("final", measures(def.set(), def.finalTotals()));
        }
        ObjectNode sets = n.putObject("sets");
        for (SetReport s : d.sets()) {
            ObjectNode o = sets.putObject(s.name());
            o.put("verdict", s.verdict().wireName());
            o.set("keys", keys(s.comparison().range().counts()));
            o.set("stream", measures(s.set(), s.comparison().range().stream()));
            o.set("batch", measures(s.set(), s.comparison().range().batch()));
            o.set("final", measures(s.set(), s.finalTotals()));
            o.put("values_corrected", s.valuesCorrected());
        }
        if (!d.notCovered().isEmpty()) {
            ObjectNode nc = n.putObject("not_covered");
            d.notCovered().forEach(nc::put);
        }
        try {
            return JSON_MAPPER.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize totals", e);
        }
    }

    /**
     * summary.json: the run (id, scope, time zone, verdict), the default set's summary at the top level as it was
     * before metric sets (so readers of it keep working), the sets reconciled and not covered, and every set's summary
     * under {@code sets}.
     */
    static String summaryJson(ReportData d) throws JsonProcessingException {
        ObjectNode root = JSON_MAPPER.createObjectNode();
        root.put("run_id", d.runId());
        root.put("dry_run", d.dryRun());
        ObjectNode scope = root.putObject("scope");
        scope.put("label", d.scope().label());
        scope.put("from", d.scope().from().toString());
        scope.put("to", d.scope().to().toString());
        if (d.scope().batchRunId() == null) scope.putNull("batch_run_id");
        else scope.put("batch_run_id", d.scope().batchRunId());
        SetReport def = d.defaultSet();
        List<Long> windows = def != null
                ? def.scope().windowStarts()
                : d.scope().setWindows() == null ? d.scope().windowStarts() : null;
        putWindows(scope, "windows", windows);
        root.put("time_zone", d.zone().getId());
        root.put("generated_at", d.generatedAt().toString());
        root.put("verdict", d.verdict().wireName());
        if (def != null) {
            setSummary(root, def, d);
            ObjectNode files = root.putObject("files");
            files.put("report", HTML);
            files.put("diffs", def.csvFile());
            for (ReportSection section : def.sections()) section.addTo(root);
        }
        ArrayNode names = root.putArray("metric_sets");
        d.sets().forEach(s -> names.add(s.name()));
        ObjectNode notCovered = root.putObject("not_covered");
        d.notCovered().forEach(notCovered::put);
        ObjectNode sets = root.putObject("sets");
        for (SetReport s : d.sets()) {
            ObjectNode o = sets.putObject(s.name());
            o.put("verdict", s.verdict().wireName());
            ArrayNode dims = o.putArray("dimensions");
            s.set().dimensionNames().forEach(dims::add);
            o.put("window", s.set().window().toString());
            if (s.scope().windowStarts() != null)
                putWindows(o, "scope_windows", s.scope().windowStarts());
            setSummary(o, s, d);
            o.putObject("files").put("diffs", s.csvFile());
            for (ReportSection section : s.sections()) section.addTo(o);
        }
        return JSON_MAPPER.writeValueAsString(root) + "\n";
    }

    private static void putWindows(ObjectNode node, String field, List<Long> windows) {
        if (windows == null) {
            node.putNull(field);
            return;
        }
        ArrayNode ws = node.putArray(field);
        windows.forEach(w -> ws.add(Instant.ofEpochMilli(w).toString()));
    }

    /** One set's summary fields, into {@code o}: keys, totals, corrections, tolerances, windows, largest lists, ratio. */
    private static void setSummary(ObjectNode o, SetReport s, ReportData d) {
        MetricSet set = s.set();
        o.set("keys", keys(s.comparison().range().counts()));
        ObjectNode totals = o.putObject("totals");
        GroupTotals range = s.comparison().range();
        totals.set("stream", measures(set, range.stream()));
        totals.set("batch", measures(set, range.batch()));
        totals.set("final", measures(set, s.finalTotals()));
        ObjectNode diff = totals.putObject("stream_minus_batch");
        List<Measure> ms = set.measures();
        for (int m = 0; m < ms.size(); m++) diff.put(ms.get(m).name(), range.difference(m));
        for (int m = 0; m < ms.size(); m++) {
            if (!Labels.isMoney(ms.get(m))) continue;
            ObjectNode units = totals.putObject(Labels.moneyWord(ms.get(m)) + "_units");
            units.put("stream", Money.units(range.stream().get(m)));
            units.put("batch", Money.units(range.batch().get(m)));
            units.put("final", Money.units(s.finalTotals().get(m)));
            units.put("stream_minus_batch", Money.units(range.difference(m)));
        }
        // In a dry run: what the run would have done.
        ObjectNode corr = o.putObject("corrections");
        corr.put("keys_finalized", s.keysFinalized());
        corr.put("values_corrected", s.valuesCorrected());
        ObjectNode byReason = corr.putObject("by_reason");
        for (Reason r : Reason.values())
            byReason.put(r.wireName(), s.corrections().getOrDefault(r, 0L));
        ObjectNode tol = o.putObject("tolerances");
        for (Map.Entry<String, Tolerance> e : set.tolerances().entrySet()) {
            ObjectNode t = tol.putObject(e.getKey());
            t.put("relative", e.getValue().relative().toPlainString());
            t.put("absolute", e.getValue().absolute());
        }
        ObjectNode windows = o.putObject("windows");
        windows.put("count", s.comparison().windows().size());
        windows.put(
                "with_differences",
                s.comparison().windows().stream()
                        .filter(w -> w.totals().counts().differing() > 0)
                        .count());
        ArrayNode largest = o.putArray("largest_mismatches");
        for (ReconciliationDiffsTable.Row r : s.largestMismatches()) {
            ObjectNode row = largest.addObject();
            putKey(row, set, r);
            row.put("within_tolerance", r.withinTolerance());
            row.set("stream", measures(set, r.stream()));
            row.set("batch", measures(set, r.batch()));
        }
        DerivedRatio ratio = s.ratio();
        if (ratio != null) {
            ObjectNode rn = o.putObject(ratio.name());
            rn.put("stream", s.streamRatio());
            rn.put("final", s.finalRatio());
            rn.put(
                    "final_minus_stream",
                    s.streamRatio() == null || s.finalRatio() == null
                            ? null
                            : s.finalRatio().subtract(s.streamRatio()));
            ArrayNode rl = rn.putArray("largest_differences");
            for (LargestRatioDiffs.Difference c : s.largestRatioDifferences()) {
                ObjectNode row = rl.addObject();
                putKey(row, set, c.row());
                row.put("stream_" + ratio.name(), c.streamValue());
                row.put("final_" + ratio.name(), c.finalValue());
                row.put("final_minus_stream", c.difference());
            }
        }
    }

    private static void putKey(ObjectNode o, MetricSet set, ReconciliationDiffsTable.Row r) {
        o.put("window_start", Instant.ofEpochMilli(r.key().windowStartMillis()).toString());
        List<String> dims = set.dimensionNames();
        for (int i = 0; i < dims.size(); i++) o.put(dims.get(i), r.key().dimension(i));
    }

    private static ObjectNode keys(KeyCounts k) {
        ObjectNode keys = JSON_MAPPER.createObjectNode();
        keys.put("compared", k.compared());
        keys.put("matched", k.matched());
        keys.put("mismatched", k.mismatched());
        keys.put("missing_in_stream", k.missingInStream());
        keys.put("missing_in_batch", k.missingInBatch());
        keys.put("beyond_tolerance", k.beyondTolerance());
        return keys;
    }

    /** Every measure as a JSON integer, exactly (a sum may exceed a long; JSON numbers have no size limit). */
    static ObjectNode measures(MetricSet set, MeasureValues v) {
        ObjectNode n = JSON_MAPPER.createObjectNode();
        List<Measure> ms = set.measures();
        for (int m = 0; m < ms.size(); m++) n.put(ms.get(m).name(), v.get(m));
        return n;
    }
}
