package dev.recount.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class RatioTest {
    static final BigInteger SPEND_MAX = BigInteger.TEN.pow(38).subtract(BigInteger.ONE);

    @Test
    void roundsTheExactQuotientHalfUpToTwelvePlaces() {
        assertThat(Ratio.of(BigInteger.ONE, BigInteger.valueOf(3))).isEqualTo(new BigDecimal("0.333333333333"));
        assertThat(Ratio.of(BigInteger.TWO, BigInteger.valueOf(3))).isEqualTo(new BigDecimal("0.666666666667"));
        // Exactly half a unit in the last place rounds up.
        assertThat(Ratio.of(BigInteger.ONE, BigInteger.TWO.multiply(BigInteger.TEN.pow(12))))
                .isEqualTo(new BigDecimal("0.000000000001"));
        assertThat(Ratio.of(BigInteger.TEN, BigInteger.ONE)).isEqualTo(new BigDecimal("10.000000000000"));
    }

    @Test
    void isNullWhereTheDenominatorIsZero() {
        WindowMetrics onlySpend = new WindowMetrics(0, 0, 0, 5, 1);
        for (Ratio r : Ratio.values())
            assertThat(r.of(onlySpend)).as(r.column()).isNull();
    }

    @Test
    void moneyRatiosAreMicrosAndCpmIsPerThousandImpressions() {
        WindowMetrics m = new WindowMetrics(4, 2, 1, 3_000_000, 7);
        assertThat(Ratio.CTR.of(m)).isEqualTo(new BigDecimal("0.500000000000"));
        assertThat(Ratio.CVR.of(m)).isEqualTo(new BigDecimal("0.500000000000"));
        assertThat(Ratio.CPC_MICROS.of(m)).isEqualTo(new BigDecimal("1500000.000000000000"));
        assertThat(Ratio.CPM_MICROS.of(m)).isEqualTo(new BigDecimal("750000000.000000000000"));
        assertThat(Ratio.COST_PER_CONVERSION_MICROS.of(m)).isEqualTo(new BigDecimal("3000000.000000000000"));
    }

    @Test
    void keepsEveryDigitOfASpendAtItsBound() {
        WindowMetrics m = new WindowMetrics(1, 7, 1, SPEND_MAX, 1);
        assertThat(Ratio.CPM_MICROS.of(m))
                .isEqualTo(new BigDecimal(SPEND_MAX.multiply(BigInteger.valueOf(1000))).setScale(12));
        assertThat(Ratio.CPC_MICROS.of(m).toPlainString())
                .isEqualTo("14285714285714285714285714285714285714.142857142857");
    }
}
