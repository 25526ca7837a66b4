package dev.recount.core.sets;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

/** The default set's ratios: exact quotients rounded half up to 12 places, NULL without a denominator. */
class DerivedRatioTest {
    static final BigInteger SPEND_MAX = BigInteger.TEN.pow(38).subtract(BigInteger.ONE);
    static final MetricSet SET = MetricSets.defaults().defaultSet().orElseThrow();

    static BigDecimal ratio(String name, MeasureValues v) {
        return SET.ratio(
                SET.ratios().stream()
                        .filter(r -> r.name().equals(name))
                        .findFirst()
                        .orElseThrow(),
                v);
    }

    @Test
    void roundsTheExactQuotientHalfUpToTwelvePlaces() {
        assertThat(DerivedRatio.exact(BigInteger.ONE, BigInteger.valueOf(3)))
                .isEqualTo(new BigDecimal("0.333333333333"));
        assertThat(DerivedRatio.exact(BigInteger.TWO, BigInteger.valueOf(3)))
                .isEqualTo(new BigDecimal("0.666666666667"));
        // Exactly half a unit in the last place rounds up.
        assertThat(DerivedRatio.exact(BigInteger.ONE, BigInteger.TWO.multiply(BigInteger.TEN.pow(12))))
                .isEqualTo(new BigDecimal("0.000000000001"));
        assertThat(DerivedRatio.exact(BigInteger.TEN, BigInteger.ONE)).isEqualTo(new BigDecimal("10.000000000000"));
    }

    @Test
    void isNullWhereTheDenominatorIsZero() {
        MeasureValues onlySpend = MeasureValues.of(0, 0, 0, 5, 1);
        for (DerivedRatio r : SET.ratios())
            assertThat(SET.ratio(r, onlySpend)).as(r.name()).isNull();
    }

    @Test
    void moneyRatiosAreMicrosAndCpmIsPerThousandImpressions() {
        MeasureValues m = MeasureValues.of(4, 2, 1, 3_000_000, 7);
        assertThat(ratio("ctr", m)).isEqualTo(new BigDecimal("0.500000000000"));
        assertThat(ratio("cvr", m)).isEqualTo(new BigDecimal("0.500000000000"));
        assertThat(ratio("cpc_micros", m)).isEqualTo(new BigDecimal("1500000.000000000000"));
        assertThat(ratio("cpm_micros", m)).isEqualTo(new BigDecimal("750000000.000000000000"));
        assertThat(ratio("cost_per_conversion_micros", m)).isEqualTo(new BigDecimal("3000000.000000000000"));
    }

    @Test
    void keepsEveryDigitOfASpendAtItsBound() {
        MeasureValues m =
                new MeasureValues(BigInteger.ONE, BigInteger.valueOf(7), BigInteger.ONE, SPEND_MAX, BigInteger.ONE);
        assertThat(ratio("cpm_micros", m))
                .isEqualTo(new BigDecimal(SPEND_MAX.multiply(BigInteger.valueOf(1000))).setScale(12));
        assertThat(ratio("cpc_micros", m).toPlainString())
                .isEqualTo("14285714285714285714285714285714285714.142857142857");
    }
}
