package dev.recount.tools.advise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The histogram-backed percentiles against exact nearest-rank percentiles of a known sample: never below the exact
 * value, and at most 0.1 % above it (3 significant digits); exact below 2048 ms; min, max and the largest exact.
 */
class DistributionTest {
    static final double[] QUANTILES = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0};

    /** Nearest rank, as the advisor defines a percentile: {@code sorted[ceil(q * n) - 1]}. */
    static long exact(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    @Test
    void percentilesOfALogNormalSampleWithNegativeDelaysAreWithinThreeSignificantDigits() {
        // Delays from 1 ms to hours (median 2 s), 2 % of them negative (event time ahead of the record's clock).
        SplittableRandom random = new SplittableRandom(20261130L);
        int n = 500_000;
        long[] values = new long[n];
        Distribution d = new Distribution();
        for (int i = 0; i < n; i++) {
            long v = Math.round(Math.exp(Math.log(2_000) + 2.0 * gaussian(random)));
            if (random.nextInt(50) == 0) v = -v;
            values[i] = v;
            d.record(v);
        }
        long[] sorted = values.clone();
        Arrays.sort(sorted);

        assertThat(d.count()).isEqualTo(n);
        assertThat(d.min()).isEqualTo(sorted[0]);
        assertThat(d.max()).isEqualTo(sorted[n - 1]);
        assertThat(d.largest(3)).containsExactly(sorted[n - 1], sorted[n - 2], sorted[n - 3]);
        for (double q : QUANTILES) {
            long want = exact(sorted, q);
            long got = d.percentile(q);
            assertThat(got).as("p%s: an upper bound", q * 100).isGreaterThanOrEqualTo(want);
            assertThat(got - want)
                    .as("p%s = %d, exact %d: within 0.1 %%", q * 100, got, want)
                    .isLessThanOrEqualTo(Math.abs(want) / 1000);
        }
        // Some of the quantiles above fall among the negative values: both histograms were exercised.
        assertThat(exact(sorted, 0.01)).isNegative();
        assertThat(exact(sorted, 0.999)).isGreaterThan(2_048 * 16);

        long threshold = exact(sorted, 0.9);
        double exactShare =
                (double) Arrays.stream(sorted).filter(v -> v > threshold).count() / n;
        assertThat(d.shareAbove(threshold)).isCloseTo(exactShare, org.assertj.core.data.Offset.offset(0.002));
    }

    @Test
    void valuesBelow2048AreExact() {
        SplittableRandom random = new SplittableRandom(7);
        long[] values = new long[10_001];
        for (int i = 0; i < values.length; i++) values[i] = random.nextLong(-2_047, 2_048);
        Distribution d = Distribution.of(values);
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        for (double q : QUANTILES)
            assertThat(d.percentile(q)).as("p%s", q * 100).isEqualTo(exact(sorted, q));
    }

    @Test
    void memoryDoesNotGrowWithTheValuesRecorded() {
        Distribution d = new Distribution();
        d.record(-3_600_000);
        d.record(3_600_000); // an hour either way: the range the histograms must cover
        long footprint = d.footprintBytes();
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 3_000_000; i++) d.record(random.nextLong(-3_600_000, 3_600_001));
        assertThat(d.count()).isEqualTo(3_000_002);
        assertThat(d.footprintBytes()).isEqualTo(footprint).isLessThan(1 << 20);
        // Uniform over [-1 h, 1 h]: the median is near 0, p99 near 58.8 min (-1 h + 0.99 * 2 h).
        assertThat(Math.abs(d.percentile(0.5))).isLessThan(10_000);
        assertThat((double) d.percentile(0.99)).isCloseTo(3_528_000, org.assertj.core.data.Offset.offset(10_000.0));
    }

    @Test
    void anEmptyDistributionHasNoPercentileAndValuesBeyondTheHistogramAreRefused() {
        assertThatThrownBy(() -> Distribution.empty().percentile(0.5)).isInstanceOf(IllegalStateException.class);
        assertThat(Distribution.empty().shareAbove(0)).isZero();
        assertThat(Distribution.empty().largest(3)).isEmpty();
        assertThatThrownBy(() -> new Distribution().record(Long.MAX_VALUE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value must be within");
    }

    @Test
    void eventIdSetSeesEveryRepeatAndNoFalseRepeatAmongAMillionIds() {
        EventIdSet ids = new EventIdSet();
        Set<String> reference = new HashSet<>();
        SplittableRandom random = new SplittableRandom(11);
        int repeats = 0;
        for (int i = 0; i < 1_000_000; i++) {
            // Every tenth id repeats an earlier one.
            String id = i % 10 == 9 ? "evt-" + random.nextInt(i) : "evt-" + i;
            boolean expectedNew = reference.add(id);
            if (!expectedNew) repeats++;
            assertThat(ids.add(id)).as(id).isEqualTo(expectedNew);
        }
        assertThat(repeats).isPositive();
    }

    @Test
    void theDefaultRecordLimitFollowsTheHeap() {
        assertThat(AdviseCommand.defaultMaxRecords(6L << 30))
                .isEqualTo((6L << 30) / ArrivalSample.PEAK_BYTES_PER_EVENT);
        assertThat(AdviseCommand.defaultMaxRecords(64L << 20)).isEqualTo(1_000_000);
    }

    private static double gaussian(SplittableRandom random) {
        // Box-Muller: SplittableRandom has no nextGaussian on Java 17.
        double u = 1 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }
}
