package dev.recount.faults;

import dev.recount.oracle.Key;
import dev.recount.oracle.SetTruth;
import dev.recount.oracle.Truth;
import java.math.BigInteger;
import java.time.Instant;

/**
 * The event-time range a round backfills and reconciles: every window of every set's truth, widened to whole windows
 * of every set (a backfill or reconciliation range must hold whole windows of each).
 */
record Range(Instant from, Instant to) {
    static Range covering(Truth truth) {
        long step = 1;
        for (SetTruth s : truth.sets()) step = lcm(step, s.set().windowMillis());
        long first = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        for (SetTruth s : truth.sets()) {
            long size = s.set().windowMillis();
            for (Key k : s.rows().keySet()) {
                first = Math.min(first, k.windowStart());
                end = Math.max(end, k.windowStart() + size);
            }
        }
        if (first > end) throw new IllegalArgumentException("the truth holds no rows: no range to cover");
        return new Range(
                Instant.ofEpochMilli(Math.floorDiv(first, step) * step),
                Instant.ofEpochMilli(-Math.floorDiv(-end, step) * step));
    }

    private static long lcm(long a, long b) {
        return BigInteger.valueOf(a)
                .multiply(BigInteger.valueOf(b))
                .divide(BigInteger.valueOf(a).gcd(BigInteger.valueOf(b)))
                .longValueExact();
    }

    @Override
    public String toString() {
        return "[" + from + ", " + to + ")";
    }
}
