package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringWriter;
import java.math.BigInteger;
import java.util.List;
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
        assertThat(SpendChart.niceStep(tenQuintillion.multiply(BigInteger.valueOf(4))))
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

    @Test
    void chartStepsAreRound() {
        assertThat(SpendChart.niceStep(BigInteger.ZERO)).isEqualTo(BigInteger.ONE);
        assertThat(SpendChart.niceStep(BigInteger.valueOf(10_000_000))).isEqualTo(BigInteger.valueOf(5_000_000));
        assertThat(SpendChart.niceStep(BigInteger.valueOf(3_000_000_000L)))
                .isEqualTo(BigInteger.valueOf(1_000_000_000));
        assertThat(SpendChart.niceStep(BigInteger.valueOf(7))).isEqualTo(BigInteger.ONE);
    }
}
