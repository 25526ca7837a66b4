package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.report.ReportData;
import dev.recount.reconcile.report.ReportWriter;
import dev.recount.reconcile.report.SetReport;
import dev.recount.reconcile.testutils.DefaultSet;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A run of the default set alone writes the report it wrote before metric sets: report.html and diffs.csv byte for
 * byte, and every field of summary.json with the same value (it only gains fields). The golden files under
 * {@code report/golden/} were written by the reconciler of the commit before metric sets (8aaacc3), from this same
 * run: three keys (a mismatch, one only in the batch, one only in the stream), three windows, two campaign-days,
 * corrections, attribution, in Europe/Berlin; applied and as a dry run.
 */
class DefaultSetReportGoldenTest {
    static final Instant FROM = Instant.parse("2026-11-28T00:00:00Z");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theDefaultSetsReportIsTheOneItWasBeforeMetricSets(boolean dryRun) throws Exception {
        MeasureValues s = MeasureValues.of(10, 2, 0, 1_500_000, 12);
        MeasureValues b = MeasureValues.of(10, 3, 0, 1_750_000, 13);
        MeasureValues only = MeasureValues.of(7, 1, 0, 70_000, 8);
        MeasureValues zero = MeasureValues.zeros(5);
        WindowKey k1 = WindowKey.of(FROM.toEpochMilli(), "camp-<a>", "=web");
        WindowKey k2 = WindowKey.of(FROM.toEpochMilli() + 60_000, "camp-b", "app");
        WindowKey k3 = WindowKey.of(FROM.toEpochMilli() + 120_000, "camp-b", "web");
        List<ReconciliationDiffsTable.Row> diffs = List.of(
                new ReconciliationDiffsTable.Row(k1, k1.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, s, b),
                new ReconciliationDiffsTable.Row(
                        k2, k2.windowStartMillis() + 60_000, Status.MISSING_IN_STREAM, true, null, null, only),
                new ReconciliationDiffsTable.Row(
                        k3, k3.windowStartMillis() + 60_000, Status.MISSING_IN_BATCH, false, 1, only, null));
        List<Comparison.WindowTotal> ws = new ArrayList<>();
        ws.add(new Comparison.WindowTotal(
                k1.windowStartMillis(),
                k1.windowStartMillis() + 60_000,
                new GroupTotals(new KeyCounts(2, 1, 1, 0, 0, 1), s.plus(s), b.plus(s))));
        ws.add(new Comparison.WindowTotal(
                k2.windowStartMillis(),
                k2.windowStartMillis() + 60_000,
                new GroupTotals(new KeyCounts(1, 0, 0, 1, 0, 0), zero, only)));
        ws.add(new Comparison.WindowTotal(
                k3.windowStartMillis(),
                k3.windowStartMillis() + 60_000,
                new GroupTotals(new KeyCounts(1, 0, 0, 0, 1, 1), only, zero)));
        GroupTotals range = new GroupTotals(
                new KeyCounts(4, 1, 1, 1, 1, 2), s.plus(s).plus(only), b.plus(s).plus(only));
        Comparison c = new Comparison(
                range,
                ws,
                List.of(
                        new Comparison.DayTotal(
                                "camp-<a>",
                                LocalDate.of(2026, 11, 28),
                                new GroupTotals(new KeyCounts(2, 1, 1, 0, 0, 1), s.plus(s), b.plus(s))),
                        new Comparison.DayTotal(
                                "camp-b",
                                LocalDate.of(2026, 11, 28),
                                new GroupTotals(new KeyCounts(2, 0, 0, 1, 1, 1), only, only))));
        AttributionReconciliation.Outcome attribution = new AttributionReconciliation.Outcome(
                new KeyCounts(4, 1, 1, 1, 1, 3),
                new AttributionMetrics(10, 2, 5, 1_500_000),
                new AttributionMetrics(12, 2, 4, 1_750_000),
                3,
                Map.of(Reason.STREAM_MISMATCH, 2L, Reason.MISSING_IN_BATCH, 1L));
        Scope scope =
                new Scope(FROM.toEpochMilli(), FROM.plusSeconds(86_400).toEpochMilli(), null, 3L, "date 2026-11-28");
        SetReport set = new SetReport(
                DefaultSet.SET,
                scope,
                Verdict.BEYOND_TOLERANCE,
                c,
                range.batch(),
                3,
                Map.of(Reason.STREAM_MISMATCH, 3L, Reason.MISSING_IN_STREAM, 5L, Reason.MISSING_IN_BATCH, 5L),
                List.of(new AttributionSection(attribution, dryRun, DefaultSet.TABLES)));
        ReportData data = new ReportData(
                7,
                scope,
                ZoneId.of("Europe/Berlin"),
                Instant.parse("2026-11-29T01:00:00Z"),
                Verdict.BEYOND_TOLERANCE,
                dryRun,
                List.of(set));

        ReportWriter.write(dir, data, 25, x -> sink -> diffs.forEach(sink));

        String golden = "golden/" + (dryRun ? "dry" : "applied") + "/";
        assertThat(Files.readString(dir.resolve(ReportWriter.HTML))).isEqualTo(golden(golden + ReportWriter.HTML));
        assertThat(Files.readString(dir.resolve(ReportWriter.CSV))).isEqualTo(golden(golden + ReportWriter.CSV));
        ObjectMapper json = new ObjectMapper();
        JsonNode now = json.readTree(dir.resolve(ReportWriter.JSON).toFile());
        JsonNode before = json.readTree(golden(golden + ReportWriter.JSON));
        assertSameWhereBeforeHadAField("", before, now);
        assertThat(now.get("metric_sets").toString()).isEqualTo("[\"default\"]");
        assertThat(dir.toFile().list()).containsExactlyInAnyOrder("report.html", "diffs.csv", "summary.json");
    }

    /** Every field {@code before} has, {@code now} has with the same value; objects may have gained fields. */
    private static void assertSameWhereBeforeHadAField(String path, JsonNode before, JsonNode now) {
        assertThat(now).as(path).isNotNull();
        if (before.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = before.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                assertSameWhereBeforeHadAField(path + "/" + e.getKey(), e.getValue(), now.get(e.getKey()));
            }
        } else {
            assertThat(now).as(path).isEqualTo(before);
        }
    }

    private static String golden(String name) throws IOException {
        try (InputStream in = DefaultSetReportGoldenTest.class.getResourceAsStream("report/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
