package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison;
import dev.recount.reconcile.GroupTotals;
import dev.recount.reconcile.KeyCounts;
import dev.recount.reconcile.Scope;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ThreeSets;
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
    static final WindowKey KEY = WindowKey.of(FROM.toEpochMilli(), EVIL, "=cmd|' /C calc'!A0");
    static final MeasureValues S = MeasureValues.of(10, 2, 0, 1_500_000, 12);
    static final MeasureValues B = MeasureValues.of(10, 3, 0, 1_750_000, 13);
    static final Scope DAY = Scope.range(FROM, FROM.plusSeconds(86_400), "date 2026-11-28");

    /** The comparison of {@code windows} windows of a set whose stream and batch sums are {@code s} and {@code b}. */
    static Comparison comparison(int windows, MeasureValues s, MeasureValues b, String firstDimension) {
        List<Comparison.WindowTotal> ws = new ArrayList<>();
        for (int i = 0; i < windows; i++) {
            long start = FROM.toEpochMilli() + 60_000L * i;
            ws.add(new Comparison.WindowTotal(
                    start,
                    start + 60_000,
                    new GroupTotals(
                            new KeyCounts(1, i == 0 ? 0 : 1, i == 0 ? 1 : 0, 0, 0, i == 0 ? 1 : 0),
                            s,
                            i == 0 ? b : s)));
        }
        GroupTotals range = new GroupTotals(new KeyCounts(windows, windows - 1, 1, 0, 0, 1), s, b);
        return new Comparison(
                range, ws, List.of(new Comparison.DayTotal(firstDimension, LocalDate.of(2026, 11, 28), range)));
    }

    /** The default set's part of a run of {@code windows} windows, its one mismatch among the largest. */
    static SetReport defaultSet(int windows) {
        ReconciliationDiffsTable.Row diff = new ReconciliationDiffsTable.Row(
                KEY, KEY.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        return new SetReport(
                        DefaultSet.SET,
                        DAY,
                        Verdict.BEYOND_TOLERANCE,
                        comparison(windows, S, B, EVIL),
                        B,
                        1,
                        Map.of(Reason.STREAM_MISMATCH, 3L),
                        List.of())
                .withLargest(List.of(diff), List.of(), List.of(), List.of());
    }

    static ReportData data(int windows) {
        return run(defaultSet(windows));
    }

    static ReportData run(SetReport... sets) {
        return new ReportData(
                7,
                DAY,
                ZoneId.of("UTC"),
                Instant.parse("2026-11-29T01:00:00Z"),
                Verdict.BEYOND_TOLERANCE,
                false,
                List.of(sets));
    }

    /** {@code s} with another comparison and final totals. */
    static SetReport with(SetReport s, Comparison c, MeasureValues fin) {
        return new SetReport(s.set(), s.scope(), s.verdict(), c, fin, s.keysFinalized(), s.corrections(), s.sections())
                .withLargest(
                        s.largestMismatches(),
                        s.largestMissingInStream(),
                        s.largestMissingInBatch(),
                        s.largestRatioDifferences());
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
        WindowKey hostile = WindowKey.of(FROM.toEpochMilli(), script, quotes + "\u0000\u0007");
        ReconciliationDiffsTable.Row mismatch = new ReconciliationDiffsTable.Row(
                hostile, hostile.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        ReconciliationDiffsTable.Row onlyBatch = new ReconciliationDiffsTable.Row(
                WindowKey.of(FROM.toEpochMilli(), quotes, script),
                FROM.toEpochMilli() + 60_000,
                Status.MISSING_IN_STREAM,
                false,
                null,
                null,
                B);
        SetReport d = defaultSet(2);
        Comparison c = new Comparison(
                d.comparison().range(),
                d.comparison().windows(),
                List.of(new Comparison.DayTotal(
                        quotes + script,
                        LocalDate.of(2026, 11, 28),
                        d.comparison().range())));
        MetricSet set = DefaultSet.SET;
        SetReport hostileSet = new SetReport(
                set,
                d.scope(),
                d.verdict(),
                c,
                d.finalTotals(),
                d.keysFinalized(),
                d.corrections(),
                List.of(),
                List.of(mismatch),
                List.of(onlyBatch),
                List.of(),
                List.of(new LargestRatioDiffs.Difference(
                        mismatch,
                        set.ratio(set.ratios().get(0), S),
                        set.ratio(set.ratios().get(0), B))));
        ReportData hostileData = new ReportData(
                7,
                Scope.range(FROM, FROM.plusSeconds(86_400), script),
                ZoneId.of("UTC"),
                Instant.parse("2026-11-29T01:00:00Z"),
                Verdict.BEYOND_TOLERANCE,
                false,
                List.of(hostileSet));
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
        SetReport d = defaultSet(2);
        MetricSet set = DefaultSet.SET;
        ReconciliationDiffsTable.Row diff = new ReconciliationDiffsTable.Row(
                KEY, KEY.windowStartMillis() + 60_000, Status.MISMATCH, false, 2, S, B);
        SetReport withCtr = d.withLargest(
                d.largestMismatches(),
                List.of(),
                List.of(),
                List.of(new LargestRatioDiffs.Difference(
                        diff,
                        set.ratio(set.ratios().get(0), S),
                        set.ratio(set.ratios().get(0), B))));
        String html = HtmlReport.render(run(withCtr));
        String section = html.substring(
                html.indexOf("<section id=\"ctr\">"), html.indexOf("</section>", html.indexOf("<section id=\"ctr\">")));
        // The range: 2 clicks in 10 impressions streamed, 3 final.
        assertThat(section)
                .contains("<h2>Click-through rate (CTR)</h2>")
                .contains("Clicks per impression: total clicks divided by total impressions of the range")
                .contains("20.0000000000 %")
                .contains("30.0000000000 %")
                .contains("+10.0000000000 pp")
                .contains("class=\"ctrrow\"")
                .contains("2 / 10")
                .contains("3 / 10")
                .doesNotContain(EVIL)
                .contains("&lt;script&gt;");
        String json = ReportWriter.summaryJson(run(withCtr));
        assertThat(json)
                .contains(
                        "\"stream\" : 0.200000000000",
                        "\"final\" : 0.300000000000",
                        "\"final_minus_stream\" : 0.100000000000");
        JsonNode ctr = new ObjectMapper().readTree(json).get("ctr");
        assertThat(ctr.get("largest_differences").get(0).get("campaign_id").asText())
                .isEqualTo(EVIL);
        assertThat(new ObjectMapper().readTree(json).at("/sets/default/ctr")).isEqualTo(ctr);

        // No impressions: no CTR, shown as a dash and null, never as 0 or an error.
        ReportData none = run(with(d, d.comparison(), MeasureValues.of(0, 3, 0, 5, 3)));
        assertThat(HtmlReport.render(none))
                .contains("<tr id=\"ctr-range\"><th>CTR of the range</th><td>20.0000000000 %</td><td>—</td>")
                .contains("No mismatched key with impressions on both sides has a different CTR.");
        assertThat(new ObjectMapper()
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
        SetReport d = defaultSet(2);
        StringWriter out = new StringWriter();
        ReportWriter.writeCsv(
                out,
                ZoneId.of("UTC"),
                d,
                DAY.from(),
                DAY.to(),
                sink -> d.largestMismatches().forEach(sink));
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
        assertThat(lines.get(0).split(","))
                .hasSize(ReportWriter.csvHeader(DefaultSet.SET).size());
    }

    @Test
    void summaryJsonCarriesVerdictCountsAndExactSpend() throws Exception {
        String json = ReportWriter.summaryJson(data(2));
        JsonNode node = new ObjectMapper().readTree(json);
        assertThat(node.get("verdict").asText()).isEqualTo("beyond_tolerance");
        assertThat(node.at("/keys/mismatched").asLong()).isEqualTo(1);
        assertThat(node.at("/totals/batch/spend_micros").asLong()).isEqualTo(1_750_000);
        assertThat(node.at("/totals/spend_units/stream_minus_batch").asText()).isEqualTo("-0.250000");
        assertThat(node.at("/corrections/by_reason/stream_mismatch").asLong()).isEqualTo(3);
        assertThat(node.at("/largest_mismatches/0/campaign_id").asText()).isEqualTo(EVIL);
        assertThat(node.at("/metric_sets/0").asText()).isEqualTo("default");
        assertThat(node.at("/sets/default/keys")).isEqualTo(node.get("keys"));
        assertThat(node.at("/sets/default/totals")).isEqualTo(node.get("totals"));
        assertThat(node.at("/sets/default/files/diffs").asText()).isEqualTo("diffs.csv");
    }

    // ---- several sets -----------------------------------------------------------------------------------------

    static final WindowKey SLOT_KEY = WindowKey.of(FROM.toEpochMilli(), "camp-a", "<top>");
    static final MeasureValues SLOT_S = MeasureValues.of(40, 2, 900, 42);
    static final MeasureValues SLOT_B = MeasureValues.of(40, 4, 1_100, 44);

    /** campaign_slot's part: 5-minute windows, one mismatch (its CTR moved), within its tolerance on nothing else. */
    static SetReport slotSet() {
        MetricSet set = ThreeSets.SLOT;
        ReconciliationDiffsTable.Row diff = new ReconciliationDiffsTable.Row(
                SLOT_KEY, SLOT_KEY.windowStartMillis() + 300_000, Status.MISMATCH, false, 1, SLOT_S, SLOT_B);
        return new SetReport(
                        set,
                        DAY,
                        Verdict.BEYOND_TOLERANCE,
                        comparison(1, SLOT_S, SLOT_B, "camp-a"),
                        SLOT_B,
                        1,
                        Map.of(Reason.STREAM_MISMATCH, 3L),
                        List.of())
                .withLargest(
                        List.of(diff),
                        List.of(),
                        List.of(),
                        List.of(new LargestRatioDiffs.Difference(
                                diff,
                                set.ratio(set.ratios().get(0), SLOT_S),
                                set.ratio(set.ratios().get(0), SLOT_B))));
    }

    /** channel_country's part: everything matches; it has no ratio. */
    static SetReport countrySet() {
        MeasureValues v = MeasureValues.of(3, 300, 7, 9);
        return new SetReport(
                ThreeSets.COUNTRY,
                DAY,
                Verdict.WITHIN_TOLERANCE,
                new Comparison(
                        new GroupTotals(new KeyCounts(1, 1, 0, 0, 0, 0), v, v),
                        List.of(new Comparison.WindowTotal(
                                FROM.toEpochMilli(),
                                FROM.toEpochMilli() + 60_000,
                                new GroupTotals(new KeyCounts(1, 1, 0, 0, 0, 0), v, v))),
                        List.of(new Comparison.DayTotal(
                                "web",
                                LocalDate.of(2026, 11, 28),
                                new GroupTotals(new KeyCounts(1, 1, 0, 0, 0, 0), v, v)))),
                v,
                0,
                Map.of(),
                List.of());
    }

    @Test
    void aRunOfSeveralSetsGivesEachItsOwnPartUnderItsName() throws Exception {
        ReportData d = new ReportData(
                7,
                DAY,
                ZoneId.of("UTC"),
                Instant.parse("2026-11-29T01:00:00Z"),
                Verdict.BEYOND_TOLERANCE,
                false,
                List.of(defaultSet(2), slotSet(), countrySet()),
                Map.of("late_set", "no succeeded batch run of metric set late_set covers ..."));
        String html = HtmlReport.render(d);

        assertThat(html)
                .contains("final = what each metric set's serving view now serves")
                .contains("<section class=\"verdict bad\" id=\"run-verdict\">")
                .contains("3 metric sets reconciled: 2 with keys beyond the configured tolerances. 1 not reconciled:"
                        + " no succeeded batch run covers the range for late_set.")
                .contains("<a href=\"#set-campaign_slot\">campaign_slot</a></td><td class=\"text\">campaign, slot</td>"
                        + "<td class=\"text\">5m</td><td class=\"text badc\">beyond</td>")
                .contains("not reconciled: no succeeded batch run of metric set late_set covers ...")
                .containsSubsequence(
                        "<section class=\"set\" id=\"set-default\"><h2>Metric set default</h2>",
                        "<section class=\"set\" id=\"set-campaign_slot\"><h2>Metric set campaign_slot</h2>",
                        "Per campaign, slot and 5m window; served by campaign_slot__window_metrics.",
                        "<section class=\"set\" id=\"set-channel_country\"><h2>Metric set channel_country</h2>");
        String slot =
                html.substring(html.indexOf("id=\"set-campaign_slot\""), html.indexOf("id=\"set-channel_country\""));
        String country = html.substring(html.indexOf("id=\"set-channel_country\""));
        // Each set's ids are its own; its lists name its dimensions; its ratio is shown only where it has one.
        assertThat(slot)
                .contains("<tr id=\"campaign_slot-total-clicks\"><th>Clicks</th><td>2</td><td>4</td>")
                .contains("<section id=\"campaign_slot-ctr\"><h2>Click-through rate (CTR)</h2>")
                .contains("<th class=\"text\">Window</th><th class=\"text\">Campaign</th><th class=\"text\">Slot</th>")
                .contains("<td class=\"text id\">camp-a</td><td class=\"text id\">&lt;top&gt;</td>")
                .contains("5.0000000000 %", "10.0000000000 %", "+5.0000000000 pp")
                .contains("<h2>Spend per window</h2>")
                .contains("keys were finalized or changed in <code>campaign_slot__window_corrections</code>")
                .contains("<tr><th>Clicks</th><td>0</td><td>1</td></tr>");
        assertThat(country)
                .doesNotContain("-ctr\"")
                .contains("<h2>Channels per day</h2>")
                .contains("<h2>Spend per window</h2>")
                .contains("All 1 channel-days match exactly.")
                .contains("<tr id=\"channel_country-total-units\"><th>Units</th><td>7</td>");
        assertThat(html)
                .contains("<code>diffs.csv</code> (metric set default: every key with any difference, then totals per"
                        + " window, per campaign per day and for the range), <code>diffs-campaign_slot.csv</code>"
                        + " (metric set campaign_slot: ")
                .contains("<code>diffs-channel_country.csv</code> (metric set channel_country: every key with any"
                        + " difference, then totals per window, per channel per day and for the range)");

        JsonNode summary = new ObjectMapper().readTree(ReportWriter.summaryJson(d));
        assertThat(summary.get("metric_sets").toString())
                .isEqualTo("[\"default\",\"campaign_slot\",\"channel_country\"]");
        assertThat(summary.at("/not_covered/late_set").asText()).startsWith("no succeeded batch run of metric set");
        assertThat(summary.at("/sets/campaign_slot/verdict").asText()).isEqualTo("beyond_tolerance");
        assertThat(summary.at("/sets/campaign_slot/window").asText()).isEqualTo("PT5M");
        assertThat(summary.at("/sets/campaign_slot/totals/stream_minus_batch/clicks")
                        .asLong())
                .isEqualTo(-2);
        assertThat(summary.at("/sets/campaign_slot/totals/spend_units/batch").asText())
                .isEqualTo("0.001100");
        assertThat(summary.at("/sets/campaign_slot/tolerances/clicks/absolute").asLong())
                .isEqualTo(1);
        assertThat(summary.at("/sets/campaign_slot/largest_mismatches/0/slot_id")
                        .asText())
                .isEqualTo("<top>");
        assertThat(summary.at("/sets/campaign_slot/ctr/largest_differences/0/final_ctr")
                        .decimalValue())
                .isEqualByComparingTo("0.1");
        assertThat(summary.at("/sets/campaign_slot/files/diffs").asText()).isEqualTo("diffs-campaign_slot.csv");
        assertThat(summary.at("/sets/channel_country/verdict").asText()).isEqualTo("within_tolerance");
        assertThat(summary.at("/sets/channel_country/totals/final/units").asLong())
                .isEqualTo(7);
        assertThat(summary.at("/sets/channel_country").has("ctr")).isFalse();
        assertThat(summary.at("/sets/channel_country/totals").has("units_units"))
                .as("only money gets currency units")
                .isFalse();
        // The default set's summary stays at the top, as before metric sets.
        assertThat(summary.at("/keys")).isEqualTo(summary.at("/sets/default/keys"));
    }

    @Test
    void eachSetsDiffsFileHasItsDimensionsAndMeasures() throws Exception {
        SetReport slot = slotSet();
        StringWriter out = new StringWriter();
        ReportWriter.writeCsv(
                out,
                ZoneId.of("UTC"),
                slot,
                DAY.from(),
                DAY.to(),
                sink -> slot.largestMismatches().forEach(sink));
        List<String> lines = out.toString().lines().toList();
        assertThat(lines.get(0))
                .isEqualTo("row_type,window_start,window_end,day,campaign_id,slot_id,status,within_tolerance,"
                        + "stream_revision,keys,keys_matched,keys_mismatched,keys_missing_in_stream,keys_missing_in_batch,"
                        + "keys_beyond_tolerance,stream_impressions,batch_impressions,diff_impressions,"
                        + "relative_diff_impressions,stream_clicks,batch_clicks,diff_clicks,relative_diff_clicks,"
                        + "stream_spend_micros,batch_spend_micros,diff_spend_micros,relative_diff_spend_micros,"
                        + "stream_events,batch_events,diff_events,relative_diff_events,stream_spend,batch_spend,"
                        + "diff_spend");
        assertThat(lines.get(1))
                .isEqualTo("key,2026-11-28T00:00:00Z,2026-11-28T00:05:00Z,2026-11-28,camp-a,<top>,mismatch,false,1,,,,"
                        + ",,,40,40,0,0.000000,2,4,-2,-0.500000,900,1100,-200,-0.181818,42,44,-2,-0.045455,0.000900,0.001100,"
                        + "-0.000200");
        assertThat(lines)
                .filteredOn(l -> l.startsWith("campaign_day_total,2026"))
                .isEmpty();
        assertThat(lines)
                .filteredOn(l -> l.startsWith("campaign_day_total,,,2026-11-28,camp-a,,"))
                .hasSize(1);

        SetReport country = countrySet();
        StringWriter c = new StringWriter();
        ReportWriter.writeCsv(c, ZoneId.of("UTC"), country, DAY.from(), DAY.to(), sink -> {});
        assertThat(c.toString().lines().toList())
                .first()
                .asString()
                .startsWith("row_type,window_start,window_end,day,channel_id,country,status,")
                .endsWith(",stream_units,batch_units,diff_units,relative_diff_units,stream_events,batch_events,"
                        + "diff_events,relative_diff_events,stream_spend,batch_spend,diff_spend");
        assertThat(c.toString()).contains("\r\nchannel_day_total,,,2026-11-28,web,,,true,");
    }
}
