package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.List;
import java.util.Random;
import org.apache.commons.csv.CSVPrinter;
import org.junit.jupiter.api.Test;

class MoneyAndCsvTest {
    @Test
    void microsBecomeUnitsExactly() {
        assertThat(Money.units(0)).isEqualTo("0.000000");
        assertThat(Money.units(1)).isEqualTo("0.000001");
        assertThat(Money.units(-5)).isEqualTo("-0.000005");
        assertThat(Money.units(1_234_567)).isEqualTo("1.234567");
        // Beyond a double's 53 bits: every digit survives.
        assertThat(Money.units(Long.MAX_VALUE)).isEqualTo("9223372036854.775807");
        assertThat(Money.grouped(Long.MIN_VALUE)).isEqualTo("-9,223,372,036,854.775808");
        assertThat(Money.grouped(1_234_567_890_123L)).isEqualTo("1,234,567.890123");
        assertThat(Money.grouped(999_999)).isEqualTo("0.999999");
        assertThat(Money.grouped(100_000_000)).isEqualTo("100.000000");
        assertThat(Money.compact(BigInteger.valueOf(2_500_000))).isEqualTo("2.5");
        assertThat(Money.compact(BigInteger.valueOf(3_000_000_000L))).isEqualTo("3000");
    }

    @Test
    void spendBeyondALongKeepsEveryDigit() {
        BigInteger tenQuintillion = new BigInteger("10000000000000000000"); // > Long.MAX_VALUE
        assertThat(Money.units(tenQuintillion)).isEqualTo("10000000000000.000000");
        assertThat(Money.grouped(tenQuintillion.add(BigInteger.ONE))).isEqualTo("10,000,000,000,000.000001");
        assertThat(Money.grouped(BigInteger.TEN.pow(38).subtract(BigInteger.ONE)))
                .isEqualTo("99,999,999,999,999,999,999,999,999,999,999.999999");
        assertThat(Money.units(tenQuintillion.negate())).isEqualTo("-10000000000000.000000");
        assertThat(Money.relativePercent(new BigInteger("11000000000000000000"), tenQuintillion))
                .isEqualTo("+10.0000 %");
        assertThat(Money.relative(tenQuintillion.add(tenQuintillion), tenQuintillion))
                .isEqualTo("1.000000");
        assertThat(Money.relative(BigInteger.ONE, tenQuintillion)).isEqualTo("-1.000000");
        assertThat(WindowChart.niceStep(tenQuintillion.multiply(BigInteger.valueOf(4))))
                .isEqualTo(tenQuintillion);
    }

    @Test
    void relativeDifferenceIsRelativeToBatch() {
        assertThat(Money.relativePercent(1_500_000, 1_750_000)).isEqualTo("-14.2857 %");
        assertThat(Money.relativePercent(11, 10)).isEqualTo("+10.0000 %");
        assertThat(Money.relativePercent(0, 0)).isEqualTo("0 %");
        assertThat(Money.relativePercent(5, 0)).isEqualTo("n/a");
        assertThat(Money.relative(1_500_000, 1_750_000)).isEqualTo("-0.142857");
        assertThat(Money.relative(0, 7)).isEqualTo("-1.000000");
        assertThat(Money.relative(3, 0)).isEmpty();
    }

    @Test
    void longArithmeticWritesTheDigitsBigDecimalWrites() {
        // relative(long, long) and units(long) skip BigDecimal where nothing can overflow: every digit and every
        // rounding (HALF_EVEN) must be BigDecimal's, including at the edges where they fall back to it.
        long[] edges = {
            0,
            1,
            -1,
            2,
            3,
            7,
            10,
            999_999,
            1_000_000,
            1_000_001,
            Long.MAX_VALUE / 1_000_000,
            Long.MAX_VALUE / 1_000_000 + 1,
            Long.MAX_VALUE / 2,
            Long.MAX_VALUE / 2 + 1,
            Long.MAX_VALUE,
            Long.MIN_VALUE,
            Long.MIN_VALUE + 1,
            -Long.MAX_VALUE / 1_000_000 - 1
        };
        Random random = new Random(7);
        List<long[]> pairs = new java.util.ArrayList<>();
        for (long a : edges) for (long b : edges) pairs.add(new long[] {a, b});
        for (int i = 0; i < 200_000; i++) {
            long a = random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(2_000_001) - 1_000_000;
            long b = random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(2_000_001) - 1_000_000;
            pairs.add(new long[] {a, b});
            // Exact halves: (stream - batch) * 10^6 / batch ends in .5, for even and odd quotients alike.
            long odd = 2L * random.nextInt(1_000) - 999;
            pairs.add(new long[] {2_000_000 + odd, 2_000_000});
        }
        for (long[] p : pairs) {
            BigInteger s = BigInteger.valueOf(p[0]), b = BigInteger.valueOf(p[1]);
            assertThat(Money.relative(p[0], p[1]))
                    .as("relative(%d, %d)", p[0], p[1])
                    .isEqualTo(Money.relative(s, b));
            assertThat(Money.units(p[0])).as("units(%d)", p[0]).isEqualTo(new BigDecimal(s, 6).toPlainString());
        }
        assertThat(Money.relative(8_000_001, 8_000_000)).isEqualTo("0.000000"); // 0.000000125: down
        assertThat(Money.relative(2_000_003, 2_000_000)).isEqualTo("0.000002"); // 0.0000015: half, to even
        assertThat(Money.relative(2_000_005, 2_000_000)).isEqualTo("0.000002"); // 0.0000025: half, to even
        assertThat(Money.relative(1_999_995, 2_000_000)).isEqualTo("-0.000002");
        assertThat(Money.relative(7_999_999, 8_000_000)).isEqualTo("0.000000"); // no negative zero
        assertThat(new BigDecimal(-1)
                        .divide(new BigDecimal(8_000_000), 6, RoundingMode.HALF_EVEN)
                        .toPlainString())
                .isEqualTo("0.000000");
    }

    @Test
    void csvQuotesAndGuardsAgainstFormulas() throws Exception {
        StringWriter out = new StringWriter();
        Csv csv = new Csv(out);
        csv.row(List.of(
                Csv.text("plain"),
                Csv.text("a,b"),
                Csv.text("say \"hi\""),
                Csv.text("two\nlines"),
                Csv.text("=HYPERLINK(\"http://x\")"),
                Csv.text("+1"),
                Csv.text("-2"),
                Csv.text("@sum"),
                Csv.text("\tx"),
                Csv.number("-42"),
                Csv.text(""),
                Csv.text(" padded ")));
        assertThat(out.toString())
                .isEqualTo("plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\","
                        + "\"'=HYPERLINK(\"\"http://x\"\")\",'+1,'-2,'@sum,'\tx,-42,,\" padded \"\r\n");
    }

    /**
     * Cells appended without Commons CSV must come out exactly as Commons CSV prints them: random records over an
     * alphabet of plain characters and every character its quoting looks at (comma, quote, line breaks, space,
     * {@code #} and below, tab), against {@link CSVPrinter#printRecord} with the same format.
     */
    @Test
    void cellsAppendedAsTheyAreMatchWhatCommonsCsvPrints() throws Exception {
        String alphabet = "09azAZ-+.:_,\"\r\n #!\t'=@;é\u202E";
        java.util.Random random = new java.util.Random(20261201L);
        StringBuilder expected = new StringBuilder();
        StringWriter actual = new StringWriter();
        Csv csv = new Csv(actual);
        int appended = 0;
        try (CSVPrinter reference = new CSVPrinter(expected, Csv.FORMAT)) {
            for (int r = 0; r < 20_000; r++) {
                List<String> cells = new java.util.ArrayList<>();
                for (int c = random.nextInt(8) + 1; c > 0; c--) {
                    StringBuilder cell = new StringBuilder();
                    for (int k = random.nextInt(5); k > 0; k--) {
                        cell.append(alphabet.charAt(random.nextInt(random.nextBoolean() ? 11 : alphabet.length())));
                    }
                    cells.add(cell.toString());
                    if (cells.size() > 1 && Csv.printsAsItIs(cell.toString())) appended++;
                }
                reference.printRecord(cells);
                csv.row(cells);
            }
        }
        assertThat(appended).as("cells that took the appended path").isGreaterThan(10_000);
        assertThat(actual.toString()).isEqualTo(expected.toString());
    }

    @Test
    void chartStepsAreRound() {
        assertThat(WindowChart.niceStep(BigInteger.ZERO)).isEqualTo(BigInteger.ONE);
        assertThat(WindowChart.niceStep(BigInteger.valueOf(10_000_000))).isEqualTo(BigInteger.valueOf(5_000_000));
        assertThat(WindowChart.niceStep(BigInteger.valueOf(3_000_000_000L)))
                .isEqualTo(BigInteger.valueOf(1_000_000_000));
        assertThat(WindowChart.niceStep(BigInteger.valueOf(7))).isEqualTo(BigInteger.ONE);
    }
}
