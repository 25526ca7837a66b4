package dev.recount.core.metrics;

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

/** Spend sums are exact beyond {@code Long.MAX_VALUE}, in the accumulator and in its merge. */
class ExactSpendTest {
    static final long T0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

    static AdEvent conversion(long cost) {
        return new AdEvent("e", EventType.CONVERSION, T0, "c", "ch", cost, "t", 0, 0, T0);
    }

    @Test
    void tenEventsOfTwoQuintillionSumToTwentyQuintillionExactly() {
        MetricsAccumulator acc = new MetricsAccumulator();
        for (int i = 0; i < 10; i++) acc.add(conversion(2_000_000_000_000_000_000L));

        assertThat(acc.toMetrics()).isEqualTo(new WindowMetrics(0, 0, 10, new BigInteger("20000000000000000000"), 10));
    }

    @Test
    void twoEventsOfFiveQuintillionSumToTenQuintillion() {
        MetricsAccumulator acc = new MetricsAccumulator()
                .add(conversion(5_000_000_000_000_000_000L))
                .add(conversion(5_000_000_000_000_000_000L));

        assertThat(acc.toMetrics().spendMicros()).isEqualTo(new BigInteger("10000000000000000000"));
        assertThat(acc.toMetrics().spendMicros()).isGreaterThan(LONG_MAX);
    }

    @Test
    void crossesTwoToThe64AndBeyondOneEventAtATime() {
        MetricsAccumulator acc = new MetricsAccumulator();
        BigInteger expected = BigInteger.ZERO;
        for (int i = 1; i <= 7; i++) {
            acc.add(conversion(Long.MAX_VALUE));
            expected = expected.add(LONG_MAX);
            assertThat(acc.toMetrics().spendMicros())
                    .as("after %d events of Long.MAX_VALUE", i)
                    .isEqualTo(expected);
        }
        assertThat(expected).isGreaterThan(TWO_TO_THE_64.multiply(BigInteger.valueOf(3)));
    }

    @Test
    void mergesAccumulatorsNearTheBoundsExactly() {
        // 2^64 - 1: the largest value without a carry, plus 1 in the other accumulator.
        MetricsAccumulator belowWrap = new MetricsAccumulator()
                .add(conversion(Long.MAX_VALUE))
                .add(conversion(Long.MAX_VALUE))
                .add(conversion(1));
        assertThat(belowWrap.toMetrics().spendMicros()).isEqualTo(TWO_TO_THE_64.subtract(BigInteger.ONE));
        MetricsAccumulator one = new MetricsAccumulator().add(conversion(1));
        assertThat(belowWrap.merge(one).toMetrics().spendMicros()).isEqualTo(TWO_TO_THE_64);

        // Each side just below Long.MAX_VALUE: merged they pass it without wrapping the low word.
        MetricsAccumulator a = new MetricsAccumulator().add(conversion(Long.MAX_VALUE - 1));
        MetricsAccumulator b = new MetricsAccumulator().add(conversion(Long.MAX_VALUE - 2));
        assertThat(a.merge(b).toMetrics())
                .isEqualTo(new WindowMetrics(
                        0, 0, 2, LONG_MAX.multiply(BigInteger.TWO).subtract(BigInteger.valueOf(3)), 2));

        // Both sides with carries and low words that wrap once more when added.
        MetricsAccumulator c = new MetricsAccumulator();
        MetricsAccumulator d = new MetricsAccumulator();
        for (int i = 0; i < 5; i++) {
            c.add(conversion(Long.MAX_VALUE));
            d.add(conversion(Long.MAX_VALUE - i));
        }
        BigInteger expected = c.toMetrics().spendMicros().add(d.toMetrics().spendMicros());
        assertThat(c.merge(d).toMetrics().spendMicros())
                .isEqualTo(expected)
                .isEqualTo(LONG_MAX.multiply(BigInteger.TEN).subtract(BigInteger.valueOf(10)));
    }

    @Test
    void agreesWithBigIntegerArithmeticOnRandomLargeCostsAndMerges() {
        SplittableRandom random = new SplittableRandom(20261129L);
        for (int round = 0; round < 200; round++) {
            List<MetricsAccumulator> parts = new ArrayList<>();
            BigInteger expected = BigInteger.ZERO;
            int n = 1 + random.nextInt(40);
            int partitions = 1 + random.nextInt(4);
            for (int p = 0; p < partitions; p++) parts.add(new MetricsAccumulator());
            for (int i = 0; i < n; i++) {
                long cost =
                        random.nextBoolean() ? Long.MAX_VALUE - random.nextInt(1000) : random.nextLong(Long.MAX_VALUE);
                parts.get(random.nextInt(parts.size())).add(conversion(cost));
                expected = expected.add(BigInteger.valueOf(cost));
            }
            MetricsAccumulator total = new MetricsAccumulator();
            for (MetricsAccumulator p : parts) total.merge(p);
            assertThat(total.toMetrics()).as("round %d", round).isEqualTo(new WindowMetrics(0, 0, n, expected, n));
        }
    }

    @Test
    void restoresTotalsIncludingTheCarry() {
        WindowMetrics big = new WindowMetrics(
                1, 2, 3, TWO_TO_THE_64.multiply(BigInteger.valueOf(7)).add(BigInteger.valueOf(5)), 6);
        assertThat(MetricsAccumulator.of(big).toMetrics()).isEqualTo(big);
        assertThat(MetricsAccumulator.of(big)
                        .add(conversion(Long.MAX_VALUE))
                        .toMetrics()
                        .spendMicros())
                .isEqualTo(big.spendMicros().add(LONG_MAX));
        assertThatThrownBy(() -> MetricsAccumulator.of(new WindowMetrics(0, 0, 0, -1, 0)))
                .hasMessageContaining("spendMicros");
    }

    @Test
    void anAccumulatorOfTheOldLayoutKeepsAddingExactly() {
        // What a checkpoint from before the carry field restores to: the spend slot as a plain long, no carry.
        MetricsAccumulator restored = new MetricsAccumulator();
        restored.sums = new long[] {0, 0, 1, Long.MAX_VALUE - 10, 1};

        restored.add(conversion(Long.MAX_VALUE));

        assertThat(restored.toMetrics().spendMicros())
                .isEqualTo(LONG_MAX.multiply(BigInteger.TWO).subtract(BigInteger.TEN));
    }

    @Test
    void aNegativeCostIsRejectedNotSummed() {
        assertThatThrownBy(() -> new MetricsAccumulator().add(conversion(-1))).hasMessageContaining("cost_micros");
    }

    @Test
    void windowMetricsAddSpendExactly() {
        WindowMetrics max = new WindowMetrics(0, 0, 1, Long.MAX_VALUE, 1);
        assertThat(max.plus(max).spendMicros()).isEqualTo(LONG_MAX.multiply(BigInteger.TWO));
        assertThat(max.get(Metric.SPEND_MICROS)).isEqualTo(LONG_MAX);
        assertThat(max.get(Metric.EVENTS)).isEqualTo(BigInteger.ONE);
        assertThat(max.count(Metric.CONVERSIONS)).isEqualTo(1);
        assertThatThrownBy(() -> max.count(Metric.SPEND_MICROS)).isInstanceOf(IllegalArgumentException.class);
    }
}
