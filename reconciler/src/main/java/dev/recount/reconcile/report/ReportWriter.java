package dev.recount.reconcile.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
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
import java.util.function.Consumer;

/** Writes a run's three report files: report.html, diffs.csv and summary.json. */
public final class ReportWriter {
    public static final String HTML = "report.html";
    public static final String CSV = "diffs.csv";
    public static final String JSON = "summary.json";

    /** Decimals (the ratios) are written with every digit and never in exponent notation (1E-12). */
    private static final ObjectMapper JSON_MAPPER = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(com.fasterxml.jackson.core.JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
            // Sections are added to the summary read back as a tree: its decimals must stay exact, digit for digit.
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
            .configure(com.fasterxml.jackson.databind.cfg.JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false);

    /** Streams every diff of the run, in key order (from the database, without holding them all). */
    @FunctionalInterface
    public interface DiffSource {
        void forEach(Consumer<ReconciliationDiffsTable.Row> sink) throws SQLException;
    }

    private ReportWriter() {}

    /**
     * Prepares, without any run's data and writing nothing, what writing a report needs the first time in a JVM: the
     * templates compiled and rendered once empty, the JSON and CSV writers' classes loaded and used once. A command
     * line run is a JVM of its own, where that is about 0.4 s of a report's first 0.9–1.3 s on the benchmark's day
     * (docs/benchmarks.md §10); a run does it on a thread of its own while PostgreSQL compares. Harmless twice, or
     * beside a report being written.
     */
    public static void preload() {
        Templates.preload();
        try {
            JSON_MAPPER.writeValueAsString(JSON_MAPPER.createObjectNode().put("preload", true));
            new Csv(new StringBuilder()).row(csvHeader());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes the three files into {@code dir}. The diffs are read once: into diffs.csv, and into the largest
     * differences per status ({@code top} of each) that report.html and summary.json show, so {@code data}'s own
     * lists are ignored. Returns {@code data} with those lists.
     */
    public static ReportData write(Path dir, ReportData data, int top, DiffSource diffs)
            throws IOException, SQLException {
        return write(dir, data, top, diffs, List.of());
    }

    /** As {@link #write(Path, ReportData, int, DiffSource)}, with {@code sections} in report.html and summary.json. */
    public static ReportData write(Path dir, ReportData data, int top, DiffSource diffs, List<ReportSection> sections)
            throws IOException, SQLException {
        Files.createDirectories(dir);
        LargestDiffs largest = new LargestDiffs(top);
        LargestCtrDiffs largestCtr = new LargestCtrDiffs(top);
        try (BufferedWriter out = Files.newBufferedWriter(dir.resolve(CSV), StandardCharsets.UTF_8)) {
            writeCsv(
                    out,
                    data,
                    sink -> diffs.forEach(row -> {
                        largest.accept(row);
                        largestCtr.accept(row);
                        sink.accept(row);
                    }));
        }
        ReportData full = data.withLargest(
                largest.of(ReconciliationDiffsTable.Status.MISMATCH),
                largest.of(ReconciliationDiffsTable.Status.MISSING_IN_STREAM),
                largest.of(ReconciliationDiffsTable.Status.MISSING_IN_BATCH),
                largestCtr.largest());
        Files.writeString(dir.resolve(HTML), HtmlReport.render(full, sections), StandardCharsets.UTF_8);
        String summary = summaryJson(full);
        if (!sections.isEmpty()) {
            ObjectNode root = (ObjectNode) JSON_MAPPER.readTree(summary);
            for (ReportSection section : sections) section.addTo(root);
            summary = JSON_MAPPER.writeValueAsString(root) + "\n";
        }
        Files.writeString(dir.resolve(JSON), summary, StandardCharsets.UTF_8);
        return full;
    }

    // ---- diffs.csv -------------------------------------------------------------------------------------

    /** Header of diffs.csv: what a row is, its key or group, its classification, then per metric the values. */
    public static List<String> csvHeader() {
        List<String> h = new ArrayList<>(List.of(
                "row_type",
                "window_start",
                "window_end",
                "day",
                "campaign_id",
                "channel_id",
                "status",
                "within_tolerance",
                "stream_revision",
                "keys",
                "keys_matched",
                "keys_mismatched",
                "keys_missing_in_stream",
                "keys_missing_in_batch",
                "keys_beyond_tolerance"));
        for (Metric m : Metric.values()) {
            String c = m.column();
            h.addAll(List.of("stream_" + c, "batch_" + c, "diff_" + c, "relative_diff_" + c));
        }
        h.addAll(List.of("stream_spend", "batch_spend", "diff_spend"));
        return h;
    }

    static void writeCsv(Writer out, ReportData data, DiffSource diffs) throws IOException, SQLException {
        Csv csv = new Csv(out);
        csv.row(csvHeader());
        // The diffs come in key order, window by window: a window's start, end and day are written once per window.
        WindowCells window = new WindowCells(data.zone());
        try {
            diffs.forEach(r -> {
                try {
                    window.of(r.key().windowStartMillis(), r.windowEndMillis());
                    List<String> row = new ArrayList<>(List.of(
                            "key",
                            window.start,
                            window.end,
                            window.day,
                            Csv.text(r.key().campaignId()),
                            Csv.text(r.key().channelId()),
                            r.status().wireName(),
                            String.valueOf(r.withinTolerance()),
                            r.streamRevision() == null ? "" : r.streamRevision().toString(),
                            "",
                            "",
                            "",
                            "",
                            "",
                            ""));
                    metricCells(
                            row,
                            r.stream() == null ? WindowMetrics.ZERO : r.stream(),
                            r.batch() == null ? WindowMetrics.ZERO : r.batch(),
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
        for (Comparison.WindowTotal w : data.comparison().windows()) {
            totalRow(
                    csv,
                    "window_total",
                    Instant.ofEpochMilli(w.windowStartMillis()).toString(),
                    Instant.ofEpochMilli(w.windowEndMillis()).toString(),
                    Instant.ofEpochMilli(w.windowStartMillis())
                            .atZone(data.zone())
                            .toLocalDate()
                            .toString(),
                    "",
                    w.totals());
        }
        for (Comparison.CampaignDayTotal c : data.comparison().campaignDays()) {
            totalRow(csv, "campaign_day_total", "", "", c.day().toString(), Csv.text(c.campaignId()), c.totals());
        }
        totalRow(
                csv,
                "range_total",
                data.scope().from().toString(),
                data.scope().to().toString(),
                "",
                "",
                data.comparison().range());
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
            Csv csv, String type, String start, String end, String day, String campaign, GroupTotals t)
            throws IOException {
        KeyCounts k = t.counts();
        List<String> row = new ArrayList<>(List.of(
                type,
                start,
                end,
                day,
                campaign,
                "",
                "",
                String.valueOf(k.beyondTolerance() == 0),
                "",
                String.valueOf(k.compared()),
                String.valueOf(k.matched()),
                String.valueOf(k.mismatched()),
                String.valueOf(k.missingInStream()),
                String.valueOf(k.missingInBatch()),
                String.valueOf(k.beyondTolerance())));
        metricCells(row, t.stream(), t.batch(), false, false);
        csv.row(row);
    }

    /** A missing side's values are left empty (not 0); its difference counts it as 0. */
    private static void metricCells(
            List<String> row, WindowMetrics s, WindowMetrics b, boolean noStream, boolean noBatch) {
        for (Metric m : Metric.values()) {
            boolean longs = m.isCount()
                    || (s.spendMicros().bitLength() < 64 && b.spendMicros().bitLength() < 64);
            long sl = !longs ? 0 : m.isCount() ? s.count(m) : s.spendMicros().longValue();
            long bl = !longs ? 0 : m.isCount() ? b.count(m) : b.spendMicros().longValue();
            long dl = sl - bl;
            if (longs && ((sl ^ bl) & (sl ^ dl)) >= 0) {
                // Counts, and spends that fit a long (nearly all), in long arithmetic: the same digits without the
                // BigIntegers (several per cell, on every row of diffs.csv).
                row.add(noStream ? "" : Long.toString(sl));
                row.add(noBatch ? "" : Long.toString(bl));
                row.add(Long.toString(dl));
                row.add(Csv.number(Money.relative(sl, bl)));
            } else {
                BigInteger sv = s.get(m), bv = b.get(m);
                row.add(noStream ? "" : Csv.number(sv.toString()));
                row.add(noBatch ? "" : Csv.number(bv.toString()));
                row.add(Csv.number(sv.subtract(bv).toString()));
                row.add(Csv.number(Money.relative(sv, bv)));
            }
        }
        row.add(noStream ? "" : Csv.number(Money.units(s.spendMicros())));
        row.add(noBatch ? "" : Csv.number(Money.units(b.spendMicros())));
        row.add(Csv.number(Money.units(s.spendMicros().subtract(b.spendMicros()))));
    }

    // ---- summary.json and the run row's totals ---------------------------------------------------------------

    /** The range totals stored in {@code reconciliation_runs.totals}: stream, batch and final per metric. */
    public static String totalsJson(GroupTotals range, WindowMetrics fin) {
        ObjectNode n = JSON_MAPPER.createObjectNode();
        n.set("stream", metrics(range.stream()));
        n.set("batch", metrics(range.batch()));
        n.set("final", metrics(fin));
        try {
            return JSON_MAPPER.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize totals", e);
        }
    }

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
        if (d.scope().windowStarts() == null) scope.putNull("windows");
        else {
            ArrayNode ws = scope.putArray("windows");
            d.scope().windowStarts().forEach(w -> ws.add(Instant.ofEpochMilli(w).toString()));
        }
        root.put("time_zone", d.zone().getId());
        root.put("generated_at", d.generatedAt().toString());
        root.put("verdict", d.verdict().wireName());
        KeyCounts k = d.comparison().range().counts();
        ObjectNode keys = root.putObject("keys");
        keys.put("compared", k.compared());
        keys.put("matched", k.matched());
        keys.put("mismatched", k.mismatched());
        keys.put("missing_in_stream", k.missingInStream());
        keys.put("missing_in_batch", k.missingInBatch());
        keys.put("beyond_tolerance", k.beyondTolerance());
        ObjectNode totals = root.putObject("totals");
        GroupTotals range = d.comparison().range();
        totals.set("stream", metrics(range.stream()));
        totals.set("batch", metrics(range.batch()));
        totals.set("final", metrics(d.finalTotals()));
        ObjectNode diff = totals.putObject("stream_minus_batch");
        for (Metric m : Metric.values()) diff.put(m.column(), range.difference(m));
        ObjectNode spend = totals.putObject("spend_units");
        spend.put("stream", Money.units(range.stream().spendMicros()));
        spend.put("batch", Money.units(range.batch().spendMicros()));
        spend.put("final", Money.units(d.finalTotals().spendMicros()));
        spend.put("stream_minus_batch", Money.units(range.difference(Metric.SPEND_MICROS)));
        // In a dry run: what the run would have done.
        ObjectNode corr = root.putObject("corrections");
        corr.put("keys_finalized", d.keysFinalized());
        corr.put("values_corrected", d.valuesCorrected());
        ObjectNode byReason = corr.putObject("by_reason");
        for (Reason r : Reason.values())
            byReason.put(r.wireName(), d.corrections().getOrDefault(r, 0L));
        ObjectNode tol = root.putObject("tolerances");
        for (Metric m : Metric.values()) {
            ObjectNode t = tol.putObject(m.column());
            t.put("relative", d.tolerances().of(m).relative().toPlainString());
            t.put("absolute", d.tolerances().of(m).absolute());
        }
        ObjectNode windows = root.putObject("windows");
        windows.put("count", d.comparison().windows().size());
        windows.put(
                "with_differences",
                d.comparison().windows().stream()
                        .filter(w -> w.totals().counts().differing() > 0)
                        .count());
        ArrayNode largest = root.putArray("largest_mismatches");
        for (ReconciliationDiffsTable.Row r : d.largestMismatches()) {
            ObjectNode o = largest.addObject();
            o.put(
                    "window_start",
                    Instant.ofEpochMilli(r.key().windowStartMillis()).toString());
            o.put("campaign_id", r.key().campaignId());
            o.put("channel_id", r.key().channelId());
            o.put("within_tolerance", r.withinTolerance());
            o.set("stream", metrics(r.stream()));
            o.set("batch", metrics(r.batch()));
        }
        ObjectNode ctr = root.putObject("ctr");
        ctr.put("stream", d.streamCtr());
        ctr.put("final", d.finalCtr());
        ctr.put(
                "final_minus_stream",
                d.streamCtr() == null || d.finalCtr() == null
                        ? null
                        : d.finalCtr().subtract(d.streamCtr()));
        ArrayNode ctrLargest = ctr.putArray("largest_differences");
        for (LargestCtrDiffs.Difference c : d.largestCtrDifferences()) {
            ObjectNode o = ctrLargest.addObject();
            o.put(
                    "window_start",
                    Instant.ofEpochMilli(c.row().key().windowStartMillis()).toString());
            o.put("campaign_id", c.row().key().campaignId());
            o.put("channel_id", c.row().key().channelId());
            o.put("stream_ctr", c.streamCtr());
            o.put("final_ctr", c.finalCtr());
            o.put("final_minus_stream", c.difference());
        }
        ObjectNode files = root.putObject("files");
        files.put("report", HTML);
        files.put("diffs", CSV);
        return JSON_MAPPER.writeValueAsString(root) + "\n";
    }

    /** Every metric as a JSON integer, exactly (spend may exceed a long; JSON numbers have no size limit). */
    private static ObjectNode metrics(WindowMetrics w) {
        ObjectNode n = JSON_MAPPER.createObjectNode();
        for (Metric m : Metric.values()) n.put(m.column(), w.get(m));
        return n;
    }
}
