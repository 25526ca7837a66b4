package dev.recount.tools.advise;

import java.util.Arrays;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Millisecond values (arrival delays, gaps between records) recorded one by one, and their percentiles, in memory
 * that does not grow with the number of values: an HdrHistogram keeps {@value #SIGNIFICANT_DIGITS} significant
 * digits, so however many records {@code advise} reads, a distribution costs a few hundred KB at most.
 *
 * <p>Percentiles are nearest-rank (the value at rank {@code ceil(q * n)} in sorted order), resolved to the
 * histogram's precision: values below 2048 ms are exact; above, a percentile is at most 0.1 % of its value larger
 * than the exact one, never smaller (the top of the histogram bucket it falls in), so "p99 = 27 s" still means at
 * least 99 % of the sample is at most 27 s. The minimum, the maximum and the {@value #LARGEST_KEPT} largest values
 * are kept exactly.
 *
 * <p>Delays can be negative (event time ahead of the record's time); HdrHistogram counts only non-negative values,
 * so the negative ones go, negated, into a histogram of their own.
 */
final class Distribution {
    static final int SIGNIFICANT_DIGITS = 3;
    /** How many of the largest values are kept exactly (the report names the largest gaps). */
    static final int LARGEST_KEPT = 3;
    /** HdrHistogram's own limit on a value: half of a long. */
    static final long LIMIT = Long.MAX_VALUE / 2;

    private final Histogram nonNegative = new Histogram(SIGNIFICANT_DIGITS);
    private final Histogram negated = new Histogram(SIGNIFICANT_DIGITS);
    private long min = Long.MAX_VALUE;
    private long max = Long.MIN_VALUE;
    /** The largest values seen, largest first; the first {@code largestCount} are set. */
    private final long[] largest = new long[LARGEST_KEPT];

    private int largestCount;

    /** An empty distribution to {@link #record} into. */
    Distribution() {}

    static Distribution of(long... values) {
        Distribution d = new Distribution();
        for (long v : values) d.record(v);
        return d;
    }

    static Distribution empty() {
        return new Distribution();
    }

    /** Adds one value. */
    void record(long value) {
        if (value > LIMIT || value < -LIMIT) {
            throw new IllegalArgumentException("value must be within +-" + LIMIT + " ms, got " + value);
        }
        if (value >= 0) nonNegative.recordValue(value);
        else negated.recordValue(-value);
        min = Math.min(min, value);
        max = Math.max(max, value);
        keepIfLargest(value);
    }

    long count() {
        return nonNegative.getTotalCount() + negated.getTotalCount();
    }

    boolean isEmpty() {
        return count() == 0;
    }

    /**
     * @param q in (0, 1]
     * @throws IllegalStateException on an empty sample: there is no percentile to recommend from
     */
    long percentile(double q) {
        if (!(q > 0 && q <= 1)) throw new IllegalArgumentException("quantile must be in (0, 1], got " + q);
        long n = count();
        if (n == 0) throw new IllegalStateException("no values");
        long rank = Math.max(1, (long) Math.ceil(q * n));
        long negatives = negated.getTotalCount();
        long value;
        if (rank <= negatives) {
            // The rank-th smallest value overall is the (negatives - rank + 1)-th smallest negated one. The bottom
            // of its bucket, negated, is the top of the value's bucket: an upper bound, as on the other side.
            value = -negated.lowestEquivalentValue(valueAtRank(negated, negatives - rank + 1));
        } else {
            value = nonNegative.highestEquivalentValue(valueAtRank(nonNegative, rank - negatives));
        }
        return Math.max(min, Math.min(max, value));
    }

    long min() {
        if (isEmpty()) throw new IllegalStateException("no values");
        return min;
    }

    long max() {
        if (isEmpty()) throw new IllegalStateException("no values");
        return max;
    }

    /** Share of the values strictly greater than {@code threshold} (to the histogram's precision); 0 when empty. */
    double shareAbove(long threshold) {
        long n = count();
        if (n == 0 || threshold >= max) return 0;
        long above;
        if (threshold >= 0) {
            above = nonNegative.getCountBetweenValues(threshold + 1, Math.max(threshold + 1, max));
        } else {
            // Every non-negative value, and the negative ones above the threshold: negated, below -threshold.
            above = nonNegative.getTotalCount()
                    + (-threshold - 1 >= 0 ? negated.getCountBetweenValues(0, -threshold - 1) : 0);
        }
        return (double) Math.min(above, n) / n;
    }

    /** The largest {@code n} values (at most {@value #LARGEST_KEPT}), largest first, exactly. */
    long[] largest(int n) {
        if (n < 0) throw new IllegalArgumentException("n must be >= 0, got " + n);
        return Arrays.copyOf(largest, Math.min(n, largestCount));
    }

    /** Bytes the histograms take: it depends on the range of the values, not on how many were recorded. */
    long footprintBytes() {
        return nonNegative.getEstimatedFootprintInBytes() + negated.getEstimatedFootprintInBytes();
    }

    /** The value at 1-based {@code rank} in sorted order, as the histogram resolves it. */
    private static long valueAtRank(Histogram h, long rank) {
        long seen = 0;
        for (HistogramIterationValue v : h.recordedValues()) {
            seen += v.getCountAtValueIteratedTo();
            if (seen >= rank) return v.getValueIteratedTo();
        }
        throw new IllegalStateException("rank " + rank + " beyond the " + h.getTotalCount() + " values recorded");
    }

    private void keepIfLargest(long value) {
        int at = largestCount;
        while (at > 0 && largest[at - 1] < value) at--;
        if (at >= LARGEST_KEPT) return;
        int end = Math.min(largestCount, LARGEST_KEPT - 1);
        System.arraycopy(largest, at, largest, at + 1, end - at);
        largest[at] = value;
        largestCount = Math.min(largestCount + 1, LARGEST_KEPT);
    }
}
