package dev.recount.deploy.advise;

import java.util.Arrays;

/**
 * A sorted sample of millisecond values (arrival delays, gaps between records) and its percentiles.
 *
 * <p>Percentiles are nearest-rank ({@code sorted[ceil(q * n) - 1]}): always a value that occurred, never an
 * interpolation, so "p99 = 27 s" means 99 % of the sample is at most 27 s, exactly.
 */
final class Distribution {
    private static final Distribution EMPTY = new Distribution(new long[0]);

    private final long[] sorted;

    private Distribution(long[] sorted) {
        this.sorted = sorted;
    }

    /** Sorts a copy of the first {@code count} values. */
    static Distribution of(long[] values, int count) {
        if (count < 0 || count > values.length) {
            throw new IllegalArgumentException("count must be in [0, " + values.length + "], got " + count);
        }
        if (count == 0) return EMPTY;
        long[] copy = Arrays.copyOf(values, count);
        Arrays.sort(copy);
        return new Distribution(copy);
    }

    static Distribution of(long... values) {
        return of(values, values.length);
    }

    static Distribution empty() {
        return EMPTY;
    }

    long count() {
        return sorted.length;
    }

    boolean isEmpty() {
        return sorted.length == 0;
    }

    /**
     * @param q in (0, 1]
     * @throws IllegalStateException on an empty sample: there is no percentile to recommend from
     */
    long percentile(double q) {
        if (!(q > 0 && q <= 1)) throw new IllegalArgumentException("quantile must be in (0, 1], got " + q);
        if (sorted.length == 0) throw new IllegalStateException("no values");
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    long min() {
        if (sorted.length == 0) throw new IllegalStateException("no values");
        return sorted[0];
    }

    long max() {
        if (sorted.length == 0) throw new IllegalStateException("no values");
        return sorted[sorted.length - 1];
    }

    /** Share of the values strictly greater than {@code threshold}; 0 for an empty sample. */
    double shareAbove(long threshold) {
        if (sorted.length == 0) return 0;
        int firstAbove = upperBound(threshold);
        return (double) (sorted.length - firstAbove) / sorted.length;
    }

    /** The largest {@code n} values, largest first. */
    long[] largest(int n) {
        int k = Math.min(n, sorted.length);
        long[] out = new long[k];
        for (int i = 0; i < k; i++) out[i] = sorted[sorted.length - 1 - i];
        return out;
    }

    /** Index of the first value > threshold. */
    private int upperBound(long threshold) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= threshold) lo = mid + 1; else hi = mid;
        }
        return lo;
    }
}
