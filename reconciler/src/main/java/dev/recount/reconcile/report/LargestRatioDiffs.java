package dev.recount.reconcile.report;

import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * The {@code limit} keys of a metric set whose value of one of its ratios (the default set's: the click-through
 * rate) moved the most between the stream and the final (batch) value, by |final − stream|, then by key; collected
 * while the diffs stream past once, like {@link LargestDiffs}.
 *
 * <p>Only mismatched keys count, and only where both sides have the ratio (its denominator above 0): a key missing on
 * one side has no ratio there (its own lists show it), and a matching key has the same ratio on both sides.
 */
public final class LargestRatioDiffs implements Consumer<ReconciliationDiffsTable.Row> {
    /** One key's ratio on both sides; {@code finalValue} is the batch's, which reconciliation makes final. */
    public record Difference(ReconciliationDiffsTable.Row row, BigDecimal streamValue, BigDecimal finalValue) {
        public Difference {
            Objects.requireNonNull(row, "row");
            Objects.requireNonNull(streamValue, "streamValue");
            Objects.requireNonNull(finalValue, "finalValue");
        }

        /** final − stream, exactly (both have {@link DerivedRatio#SCALE} decimals). */
        public BigDecimal difference() {
            return finalValue.subtract(streamValue);
        }
    }

    /** Largest first. */
    static final Comparator<Difference> LARGEST_FIRST = Comparator.comparing(
                    (Difference d) -> d.difference().abs())
            .reversed()
            .thenComparing(d -> d.row().key(), LargestDiffs.KEY_ORDER);

    private final MetricSet set;
    private final DerivedRatio ratio;
    private final int limit;
    /** The largest seen so far, smallest of them at the head (the one to drop first). */
    private final PriorityQueue<Difference> kept;

    /** @param ratio one of {@code set}'s ratios; null collects nothing (a set without ratios) */
    public LargestRatioDiffs(MetricSet set, DerivedRatio ratio, int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must be >= 0, got " + limit);
        this.set = Objects.requireNonNull(set, "set");
        this.ratio = ratio;
        this.limit = limit;
        this.kept = new PriorityQueue<>(limit + 1, LARGEST_FIRST.reversed());
    }

    @Override
    public void accept(ReconciliationDiffsTable.Row row) {
        if (ratio == null || limit == 0 || row.status() != Status.MISMATCH) return;
        BigDecimal stream = set.ratio(ratio, row.stream()), fin = set.ratio(ratio, row.batch());
        if (stream == null || fin == null || stream.compareTo(fin) == 0) return;
        Difference d = new Difference(row, stream, fin);
        // As LargestDiffs: a row that is not larger than the smallest kept is dropped after one comparison.
        if (kept.size() == limit && LARGEST_FIRST.compare(d, kept.peek()) > 0) return;
        kept.add(d);
        if (kept.size() > limit) kept.poll();
    }

    /** The kept differences, largest first. */
    public List<Difference> largest() {
        List<Difference> rows = new ArrayList<>(kept);
        rows.sort(LARGEST_FIRST);
        return rows;
    }
}
