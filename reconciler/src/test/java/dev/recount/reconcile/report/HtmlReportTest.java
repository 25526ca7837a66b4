package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.metrics.Ratio;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison;
import dev.recount.reconcile.GroupTotals;
import dev.recount.reconcile.KeyCounts;
import dev.recount.reconcile.Scope;
import dev.recount.reconcile.Tolerances;
import java.io.StringWriter;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report files from a fixed run summary, without a database. */
class HtmlReportTest {
    static final Instant FROM = Instant.parse("2026-11-28T00:00:00Z");
    static final String EVIL = "<script>document.title='x'</script>";
    static final WindowKey KEY = new WindowKey(FROM.toEpochMilli(), EVIL, "=cmd|' /C calc'!A0");
    static final WindowMetrics S = new WindowMetrics(10, 2, 0, 1_500_000, 12);
    static final WindowMetrics B = new WindowMetrics(10, 3, 0, 1_750_000, 13);

    static ReportData data(int windows) {
        List<Comparison.WindowTotal> ws = new ArrayList<>();
        for (int i = 0; i < windows; i++) {
            long start = FROM.toEpochMilli() + 60_000L * i;
            ws.add(new Comparison.WindowTotal(
                    start,
                    start + 60_000,
                    new GroupTotals(
                            new KeyCounts(1, i == 0 ? 0 : 1, i == 0 ? 1 : 0, 0, 0, i == 0 ? 1 : 0),
                            S,
                            i == 0 ? B : S)));
        }
        GroupTotals range = new GroupTotals(new KeyCounts(windows, windows - 1, 1, 0, 0, 1), S, B);
        Comparison c = new Comparison(
                range, ws, List.of(new Comparison.CampaignDayTotal(EVIL, LocalDate.of(2026, 11, 28), range)));
        ReconciliationDiffsTable.Row diff = new ReconciliationDiffsTable.Row(
                KEY, KEY.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        return new ReportData(
                7,
                Scope.range(FROM, FROM.plusSeconds(86_400), "date 2026-11-28"),
                ZoneId.of("UTC"),
                Instant.parse("2026-11-29T01:00:00Z"),
                Verdict.BEYOND_TOLERANCE,
                c,
                B,
                1,
                Map.of(Reason.STREAM_MISMATCH, 3L),
                Tolerances.exact(),
                false,
                List.of(diff),
                List.of(),
                List.of(),
                List.of());
    }

    @Test
    void escapesIdsAndLoadsNothingFromOutside() {
        String html = HtmlReport.render(data(3));
        // The engine escapes = too (&#61;): the same text in a browser.
        assertThat(html).doesNotContain(EVIL).contains("&lt;script&gt;document.title&#61;&#39;x&#39;&lt;/script&gt;");
        assertThat(html)
                .doesNotContainIgnoringCase("<script")
                .doesNotContain("http://")
                .doesNotContain("https://")
                .doesNotContain("src=")
                .doesNotContain("url(")
                .doesNotContainIgnoringCase("<link");
        assertThat(html)
                .contains("Beyond tolerance")
                .contains("<svg")
                .contains("1.500000")
                .contains("1.750000")
                .contains("-0.250000")
                .contains("clicks 2 → 3");
    }

    @Test
    void idsAreTextNeverMarkupInEverySection() {
        String script = "<script>alert(1)</script>";
        String quotes = "\"&'";
        WindowKey hostile = new WindowKey(FROM.toEpochMilli(), script, quotes + "\u0000\u0007");
        ReconciliationDiffsTable.Row mismatch = new ReconciliationDiffsTable.Row(
                hostile, hostile.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        ReconciliationDiffsTable.Row onlyBatch = new ReconciliationDiffsTable.Row(
                new WindowKey(FROM.toEpochMilli(), quotes, script),
                FROM.toEpochMilli() + 60_000,
                Status.MISSING_IN_STREAM,
                false,
                null,
                null,
                B);
        ReportData d = data(2);
        Comparison c = new Comparison(
                d.comparison().range(),
                d.comparison().windows(),
                List.of(new Comparison.CampaignDayTotal(
                        quotes + script,
                        LocalDate.of(2026, 11, 28),
                        d.comparison().range())));
        ReportData hostileData = new ReportData(
                d.runId(),
                Scope.range(FROM, FROM.plusSeconds(86_400), script),
                d.zone(),
                d.generatedAt(),
                d.verdict(),
                c,
                d.finalTotals(),
                d.keysFinalized(),
                d.corrections(),
                d.tolerances(),
                false,
                List.of(mismatch),
                List.of(onlyBatch),
                List.of(),
                List.of(new LargestCtrDiffs.Difference(mismatch, Ratio.CTR.of(S), Ratio.CTR.of(B))));
        String html = HtmlReport.render(hostileData);
        assertThat(html).doesNotContain(script).doesNotContain(quotes).doesNotContainIgnoringCase("<script");
        String escapedScript = "&lt;script&gt;alert(1)&lt;/script&gt;";
        String escapedQuotes = "&quot;&amp;&#39;";
        // In the title, the mismatches, the CTR list, the missing keys and the campaign-days.
        assertThat(html.split(java.util.regex.Pattern.quote(escapedScript), -1).length - 1)
                .isGreaterThanOrEqualTo(6);
        assertThat(html)
                .contains("<title>Reconciliation run 7 · " + escapedScript + "</title>")
                .contains("<td class=\"text id\">" + escapedScript + "</td><td class=\"text id\">" + escapedQuotes
                        + "\uFFFD\uFFFD</td>")
                .contains("<td class=\"text id\">" + escapedQuotes + "</td><td class=\"text id\">" + escapedScript
                        + "</td>")
                .contains("<td class=\"text id\">" + escapedQuotes + escapedScript + "</td>");
        // Control characters never reach the page (not even as numeric references).
        assertThat(html)
                .doesNotContain("\u0000")
                .doesNotContain("\u0007")
                .doesNotContain("&#0;")
                .doesNotContain("&#7;");
    }

    @Test
    void ctrSectionShowsStreamVsFinalOfTheRangeAndTheLargestCtrDifferences() throws Exception {
        ReportData d = data(2);
        ReconciliationDiffsTable.Row diff = new ReconciliationDiffsTable.Row(
                KEY, KEY.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        ReportData withCtr = d.withLargest(
                d.largestMismatches(),
                List.of(),
                List.of(),
                List.of(new LargestCtrDiffs.Difference(diff, Ratio.CTR.of(S), Ratio.CTR.of(B))));
        String html = HtmlReport.render(withCtr);
        String section = html.substring(
                html.indexOf("<section id=\"ctr\">"), html.indexOf("</section>", html.indexOf("<section id=\"ctr\">")));
        // The range: 2 clicks in 10 impressions streamed, 3 final.
        assertThat(section)
                .contains("20.0000000000 %")
                .contains("30.0000000000 %")
                .contains("+10.0000000000 pp")
                .contains("class=\"ctrrow\"")
                .contains("2 / 10")
                .contains("3 / 10")
                .doesNotContain(EVIL)
                .contains("&lt;script&gt;");
        String json = ReportWriter.summaryJson(withCtr);
        assertThat(json)
                .contains(
                        "\"stream\" : 0.200000000000",
                        "\"final\" : 0.300000000000",
                        "\"final_minus_stream\" : 0.100000000000");
        var ctr =
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).get("ctr");
        assertThat(ctr.get("largest_differences").get(0).get("campaign_id").asText())
                .isEqualTo(EVIL);

        // No impressions: no CTR, shown as a dash and null, never as 0 or an error.
        ReportData none = new ReportData(
                d.runId(),
                d.scope(),
                d.zone(),
                d.generatedAt(),
                d.verdict(),
                d.comparison(),
                new WindowMetrics(0, 3, 0, 5, 3),
                d.keysFinalized(),
                d.corrections(),
                d.tolerances(),
                false);
        assertThat(HtmlReport.render(none))
                .contains("<tr id=\"ctr-range\"><th>CTR of the range</th><td>20.0000000000 %</td><td>—</td>")
                .contains("No mismatched key with impressions on both sides has a different CTR.");
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(ReportWriter.summaryJson(none))
                        .get("ctr")
                        .get("final")
                        .isNull())
                .isTrue();
    }

    @Test
    void longRangesAreDrawnInBuckets() {
        String html = HtmlReport.render(data(1440 * 2));
        assertThat(html).contains("2880 windows, drawn in 720 points of 4 consecutive windows each");
        assertThat(html.length()).isLessThan(200_000);
    }

    @Test
    void csvHasKeyRowsThenTotalsGuardedAgainstFormulas() throws Exception {
        ReportData d = data(2);
        StringWriter out = new StringWriter();
        ReportWriter.writeCsv(out, d, sink -> d.largestMismatches().forEach(sink));
        List<String> lines = out.toString().lines().toList();
        assertThat(lines.get(0)).startsWith("row_type,window_start,window_end,day,campaign_id,channel_id,status,");
        assertThat(lines.get(1))
                .startsWith("key,2026-11-28T00:00:00Z,2026-11-28T00:01:00Z,2026-11-28,"
                        + "<script>document.title='x'</script>,'=cmd|' /C calc'!A0,mismatch,false,2,,,,,,,")
                .contains(",1500000,1750000,-250000,-0.142857,")
                .endsWith(",1.500000,1.750000,-0.250000");
        assertThat(lines).filteredOn(l -> l.startsWith("window_total,")).hasSize(2);
        assertThat(lines).filteredOn(l -> l.startsWith("campaign_day_total,")).hasSize(1);
        assertThat(lines.get(lines.size() - 1))
                .startsWith("range_total,2026-11-28T00:00:00Z,2026-11-29T00:00:00Z,,,,,false,,2,1,1,0,0,1,");
        assertThat(lines.get(0).split(",")).hasSize(ReportWriter.csvHeader().size());
    }

    @Test
    void summaryJsonCarriesVerdictCountsAndExactSpend() throws Exception {
        String json = ReportWriter.summaryJson(data(2));
        var node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
        assertThat(node.get("verdict").asText()).isEqualTo("beyond_tolerance");
        assertThat(node.at("/keys/mismatched").asLong()).isEqualTo(1);
        assertThat(node.at("/totals/batch/spend_micros").asLong()).isEqualTo(1_750_000);
        assertThat(node.at("/totals/spend_units/stream_minus_batch").asText()).isEqualTo("-0.250000");
        assertThat(node.at("/corrections/by_reason/stream_mismatch").asLong()).isEqualTo(3);
        assertThat(node.at("/largest_mismatches/0/campaign_id").asText()).isEqualTo(EVIL);
    }
}
