package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.reconcile.testutils.DefaultSet;
import java.io.StringReader;
import java.io.StringWriter;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * diffs.csv with hostile campaign and channel ids, parsed back with Commons CSV: every cell is where it belongs, holds
 * exactly the id (or its neutralised form), and no cell a spreadsheet would run as a formula or show reordered.
 */
class CsvReportTest {
    private static final MeasureValues S = MeasureValues.of(10, 2, 0, 1_500_000, 12);
    private static final MeasureValues B = MeasureValues.of(10, 3, 0, 1_750_000, 13);

    /** Writes diffs.csv with one key row per (campaign, channel) and parses it back, header first. */
    private static List<CSVRecord> roundTrip(List<String[]> ids, StringBuilder raw) throws Exception {
        SetReport d = HtmlReportTest.defaultSet(1);
        List<ReconciliationDiffsTable.Row> rows = new ArrayList<>();
        for (String[] id : ids) {
            WindowKey key = WindowKey.of(HtmlReportTest.FROM.toEpochMilli(), id[0], id[1]);
            rows.add(new ReconciliationDiffsTable.Row(
                    key, key.windowStartMillis() + 60_000, Status.MISMATCH, false, 1, S, B));
        }
        StringWriter out = new StringWriter();
        ReportWriter.writeCsv(
                out,
                ZoneId.of("UTC"),
                d,
                HtmlReportTest.DAY.from(),
                HtmlReportTest.DAY.to(),
                sink -> rows.forEach(sink));
        raw.append(out);
        try (CSVParser parser = CSVParser.builder()
                .setReader(new StringReader(out.toString()))
                .setFormat(Csv.FORMAT)
                .get()) {
            List<CSVRecord> records = parser.getRecords();
            assertThat(records.get(0).toList()).isEqualTo(ReportWriter.csvHeader(DefaultSet.SET));
            for (CSVRecord r : records)
                assertThat(r.size())
                        .as("cells of record %s", r.getRecordNumber())
                        .isEqualTo(ReportWriter.csvHeader(DefaultSet.SET).size());
            return records.subList(1, 1 + ids.size());
        }
    }

    private static Map<String, String> cells(CSVRecord r) {
        return Map.of("campaign_id", r.get(4), "channel_id", r.get(5), "row_type", r.get(0), "status", r.get(6));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "=HYPERLINK(\"http://x\",\"y\")",
                "+1",
                "-2+3",
                "@SUM(A1:A9)",
                "\tx",
                "\r=1",
                "=cmd|' /C calc'!A0"
            })
    void aCellStartingLikeAFormulaGetsAnApostrophe(String id) throws Exception {
        CSVRecord r = roundTrip(List.<String[]>of(new String[] {id, id}), new StringBuilder())
                .get(0);
        assertThat(cells(r))
                .containsEntry("campaign_id", "'" + id)
                .containsEntry("channel_id", "'" + id)
                .containsEntry("row_type", "key")
                .containsEntry("status", "mismatch");
    }

    @Test
    void everyBidiControlAnywhereIsShownByName() throws Exception {
        char[] bidi = {
            '\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067',
            '\u2068', '\u2069'
        };
        List<String[]> ids = new ArrayList<>();
        for (char c : bidi) ids.add(new String[] {"cmp" + c + "x", c + "tail"});
        List<CSVRecord> records = roundTrip(ids, new StringBuilder());
        for (int i = 0; i < bidi.length; i++) {
            String name = String.format("<U+%04X>", (int) bidi[i]);
            assertThat(records.get(i).get(4)).isEqualTo("cmp" + name + "x");
            assertThat(records.get(i).get(5)).isEqualTo(name + "tail");
        }
        // Near misses are left alone: the zero-width joiner and an Arabic letter are not bidi controls.
        CSVRecord plain = roundTrip(List.<String[]>of(new String[] {"a\u200Db", "\u0627\u0644"}), new StringBuilder())
                .get(0);
        assertThat(plain.get(4)).isEqualTo("a\u200Db");
        assertThat(plain.get(5)).isEqualTo("\u0627\u0644");
    }

    @Test
    void aBidiMarkCannotHideAFormula() throws Exception {
        List<CSVRecord> records = roundTrip(
                List.of(new String[] {"\u202E=cmd", "\u200E\u2066+1"}, new String[] {"=\u202Ecmd", "-\u202Dx"}),
                new StringBuilder());
        // The mark becomes visible text in front: the cell starts with '<', which no spreadsheet reads as a formula.
        assertThat(records.get(0).get(4)).isEqualTo("<U+202E>=cmd");
        assertThat(records.get(0).get(5)).isEqualTo("<U+200E><U+2066>+1");
        // A formula in front of the mark still gets its apostrophe.
        assertThat(records.get(1).get(4)).isEqualTo("'=<U+202E>cmd");
        assertThat(records.get(1).get(5)).isEqualTo("'-<U+202D>x");
        for (CSVRecord r : records) {
            for (String cell : List.of(r.get(4), r.get(5))) {
                assertThat(cell.charAt(0)).isNotIn('=', '+', '-', '@', '\t', '\r');
                assertThat(cell.chars().noneMatch(c -> SpreadsheetText.isBidiControl((char) c)))
                        .isTrue();
            }
        }
    }

    @Test
    void quotesLineBreaksCommasAndNulRoundTripExactly() throws Exception {
        List<String[]> ids = List.of(
                new String[] {"say \"hi\"", "\"quoted\""},
                new String[] {"two\nlines", "cr\r\nlf"},
                new String[] {"a,b", ",lead"},
                new String[] {"nul\u0000inside", "\u0000lead"},
                new String[] {" padded ", "#hash"});
        StringBuilder raw = new StringBuilder();
        List<CSVRecord> records = roundTrip(ids, raw);
        for (int i = 0; i < ids.size(); i++) {
            assertThat(records.get(i).get(4)).isEqualTo(ids.get(i)[0]);
            assertThat(records.get(i).get(5)).isEqualTo(ids.get(i)[1]);
        }
        // RFC 4180: CRLF between records, quotes doubled inside a quoted cell; a number stays a bare number.
        assertThat(raw.toString())
                .startsWith("row_type,window_start,")
                .contains("\r\nkey,")
                .contains(",\"say \"\"hi\"\"\",\"\"\"quoted\"\"\",")
                .contains(",-250000,-0.142857,");
    }

    @Test
    void campaignDayTotalsAreGuardedToo() throws Exception {
        SetReport d = HtmlReportTest.defaultSet(1);
        var range = d.comparison().range();
        var comparison = new dev.recount.reconcile.Comparison(
                range,
                d.comparison().windows(),
                List.of(new dev.recount.reconcile.Comparison.DayTotal(
                        "\u202E@evil", java.time.LocalDate.of(2026, 11, 28), range)));
        SetReport hostile = HtmlReportTest.with(d, comparison, d.finalTotals());
        StringWriter out = new StringWriter();
        ReportWriter.writeCsv(
                out, ZoneId.of("UTC"), hostile, HtmlReportTest.DAY.from(), HtmlReportTest.DAY.to(), sink -> {});
        try (CSVParser parser = CSVParser.builder()
                .setReader(new StringReader(out.toString()))
                .setFormat(Csv.FORMAT)
                .get()) {
            assertThat(parser.getRecords())
                    .filteredOn(r -> r.get(0).equals("campaign_day_total"))
                    .extracting(r -> r.get(4))
                    .containsExactly("<U+202E>@evil");
        }
    }

    @Test
    void neutraliseIsIdempotentOnSafeTextAndEmptyForNull() {
        assertThat(SpreadsheetText.neutralise(null)).isEmpty();
        assertThat(SpreadsheetText.neutralise("")).isEmpty();
        assertThat(SpreadsheetText.neutralise("campaign-7")).isEqualTo("campaign-7");
        assertThat(SpreadsheetText.neutralise("'=x")).isEqualTo("'=x");
    }
}
