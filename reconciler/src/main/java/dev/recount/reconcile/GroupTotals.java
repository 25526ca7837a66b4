package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import java.math.BigInteger;
import java.util.Objects;

/**
 * Key counts and summed stream and batch measures of one group of keys of a metric set (a missing side sums as 0),
 * in the set's measure order.
 */
public record GroupTotals(KeyCounts counts, MeasureValues stream, MeasureValues batch) {
    public GroupTotals {
        Objects.requireNonNull(counts, "counts");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(batch, "batch");
        if (stream.size() != batch.size()) {
            throw new IllegalArgumentException("stream has " + stream.size() + " measures, batch " + batch.size());
        }
    }

    /** No keys, for a set of {@code measures} measures. */
    public static GroupTotals empty(int measures) {
        return new GroupTotals(KeyCounts.NONE, MeasureValues.zeros(measures), MeasureValues.zeros(measures));
    }

    /** stream − batch of measure {@code m}, exactly. */
    public BigInteger difference(int m) {
        return stream.get(m).subtract(batch.get(m));
    }
}
