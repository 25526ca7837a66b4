package dev.recount.reconcile;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import java.math.BigInteger;
import java.util.Objects;

/** Key counts and summed stream and batch metrics of one group of keys (a missing side sums as 0). */
public record GroupTotals(KeyCounts counts, WindowMetrics stream, WindowMetrics batch) {
    public GroupTotals {
        Objects.requireNonNull(counts, "counts");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(batch, "batch");
    }

    public static final GroupTotals EMPTY = new GroupTotals(KeyCounts.NONE, WindowMetrics.ZERO, WindowMetrics.ZERO);

    /** stream − batch, exactly. */
    public BigInteger difference(Metric m) {
        return stream.get(m).subtract(batch.get(m));
    }
}
