package dev.recount.core.sets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A set's sums are exact beyond {@code Long.MAX_VALUE}, in its accumulator and in its merge: the default set's
 * spend_micros, a sum of cost_micros that one event may take to 2^63 - 1.
 */
class ExactSumsTest {
    static final long T0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);
    static final MetricSet SET = MetricSets.defaults().defaultSet().orElseThrow();
    static final int CONVERSIONS = SET.measureIndex("conversions");
    static final int SPEND = SET.measureIndex("spend_micros");

    static AdEvent conversion(long cost) {
        return new AdEvent("e", EventType.CONVERSION, T0, "c", "ch", cost, "t", 0, 0, T0);
    }

    static MeasureSums add(MeasureSums sums, long... costs) {
        for (long cost : costs) SET.add(sums, conversion(cost));
        return sums;
    }

    static BigInteger spend(MeasureSums sums) {
        return SET.values(sums).get(SPEND);
    }

    @Test
    void tenEventsOfTwoQuintillionSumToTwentyQuintillionExactly() {
        MeasureSums acc = SET.newSums();
        for (int i = 0; i < 10; i++) add(acc, 2_000_000_000_000_000_000L);

        assertThat(SET.values(acc))
                .isEqualTo(new MeasureValues(
                        BigInteger.ZERO,
                        BigInteger.ZERO,
                        BigInteger.TEN,
                        new BigInteger("20000000000000000000"),
                        BigInteger.TEN));
    }

    @Test
    void crossesTwoToThe64AndBeyondOneEventAtATime() {
        MeasureSums acc = SET.newSums();
        BigInteger expected = BigInteger.ZERO;
        for (int i = 1; i <= 7; i++) {
            add(acc, Long.MAX_VALUE);
            expected = expected.add(LONG_MAX);
            assertThat(spend(acc)).as("after %d events of Long.MAX_VALUE", i).isEqualTo(expected);
        }
        assertThat(expected).isGreaterThan(TWO_TO_THE_64.multiply(BigInteger.valueOf(3)));
    }

    @Test
    void mergesAccumulatorsNearTheBoundsExactly() {
        // 2^64 - 1: the largest value without a carry, plus 1 in the other accumulator.
        MeasureSums belowWrap = add(SET.newSums(), Long.MAX_VALUE, Long.MAX_VALUE, 1);
        assertThat(spend(belowWrap)).isEqualTo(TWO_TO_THE_64.subtract(BigInteger.ONE));
        assertThat(spend(SET.merge(belowWrap, add(SET.newSums(), 1)))).isEqualTo(TWO_TO_THE_64);

        // Both sides with carries and low words that wrap once more when added.
        MeasureSums c = SET.newSums();
        MeasureSums d = SET.newSums();
        for (int i = 0; i < 5; i++) {
            add(c, Long.MAX_VALUE);
            add(d, Long.MAX_VALUE - i);
        }
        BigInteger expected = spend(c).add(spend(d));
        assertThat(spend(SET.merge(c, d)))
                .isEqualTo(expected)
                .isEqualTo(LONG_MAX.multiply(BigInteger.TEN).subtract(BigInteger.TEN));
    }

    @Test
    void agreesWithBigIntegerArithmeticOnRandomLargeValuesAndMerges() {
        SplittableRandom random = new SplittableRandom(20261129L);
        for (int round = 0; round < 200; round++) {
            List<MeasureSums> parts = new ArrayList<>();
            BigInteger expected = BigInteger.ZERO;
            int n = 1 + random.nextInt(40);
            int partitions = 1 + random.nextInt(4);
            for (int p = 0; p < partitions; p++) parts.add(SET.newSums());
            for (int i = 0; i < n; i++) {
                long cost =
                        random.nextBoolean() ? Long.MAX_VALUE - random.nextInt(1000) : random.nextLong(Long.MAX_VALUE);
                add(parts.get(random.nextInt(parts.size())), cost);
                expected = expected.add(BigInteger.valueOf(cost));
            }
            MeasureSums total = SET.newSums();
            for (MeasureSums p : parts) SET.merge(total, p);
            assertThat(spend(total)).as("round %d", round).isEqualTo(expected);
            assertThat(SET.values(total).count(CONVERSIONS)).isEqualTo(n);
        }
    }

    @Test
    void restoresValuesIncludingTheCarry() {
        MeasureValues big = new MeasureValues(
                BigInteger.ONE,
                BigInteger.TWO,
                BigInteger.valueOf(3),
                TWO_TO_THE_64.multiply(BigInteger.valueOf(7)).add(BigInteger.valueOf(5)),
                BigInteger.valueOf(6));
        assertThat(SET.values(SET.sumsOf(big))).isEqualTo(big);
        assertThat(spend(add(SET.sumsOf(big), Long.MAX_VALUE)))
                .isEqualTo(big.get(SPEND).add(LONG_MAX));
        assertThatThrownBy(() -> SET.sumsOf(MeasureValues.of(0, 0, 0, 0, 0)
                        .plus(new MeasureValues(
                                BigInteger.ZERO,
                                BigInteger.ZERO,
                                BigInteger.ZERO,
                                BigInteger.ONE.shiftLeft(127),
                                BigInteger.ZERO))))
                .hasMessageContaining("spend_micros");
    }

    @Test
    void aCountOverflowIsAnErrorNotAWrongNumber() {
        MeasureSums acc = SET.sumsOf(MeasureValues.of(0, 0, 0, 0, Long.MAX_VALUE));
        assertThatThrownBy(() -> add(acc, 1)).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void aNegativeValueIsRejectedNotSummed() {
        assertThatThrownBy(() -> add(SET.newSums(), -1)).hasMessageContaining("negative value -1");
    }

    @Test
    void valuesAddExactly() {
        MeasureValues max = MeasureValues.of(0, 0, 1, Long.MAX_VALUE, 1);
        assertThat(max.plus(max).get(SPEND)).isEqualTo(LONG_MAX.multiply(BigInteger.TWO));
        assertThat(max.count(CONVERSIONS)).isEqualTo(1);
        assertThatThrownBy(() -> max.plus(max).plus(max).count(SPEND)).isInstanceOf(ArithmeticException.class);
    }
}
