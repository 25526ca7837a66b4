package dev.recount.reconcile.report;

import dev.recount.core.metrics.Ratio;
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
 * The {@code limit} keys whose click-through rate moved the most between the stream and the final (batch) value,
 * by |final CTR − stream CTR|, then by key; collected while the diffs stream past once, like {@link LargestDiffs}.
 *
 * <p>Only mismatched keys count, and only where both sides have a CTR (impressions above 0): a key missing on one side
 * has no CTR there (its own lists show it), and a matching key has the same CTR on both sides.
 */
public final class LargestCtrDiffs implements Consumer<ReconciliationDiffsTable.Row> {
    /** One key's CTR on both sides; {@code finalCtr} is the batch value, which reconciliation makes final. */
    public record Difference(ReconciliationDiffsTable.Row row, BigDecimal streamCtr, BigDecimal finalCtr) {
        public Difference {
            Objects.requireNonNull(row, "row");
            Objects.requireNonNull(streamCtr, "streamCtr");
            Objects.requireNonNull(finalCtr, "finalCtr");
        }

        /** final − stream, exactly (both have {@link Ratio#SCALE} decimals). */
        public BigDecimal difference() {
            return finalCtr.subtract(streamCtr);
        }
    }

    /** Largest first. */
    static final Comparator<Difference> LARGEST_FIRST = Comparator.comparing(
                    (Difference d) -> d.difference().abs())
            .reversed()
            .thenComparingLong(d -> d.row().key().windowStartMillis())
            .thenComparing(d -> d.row().key().campaignId())
            .thenComparing(d -> d.row().key().channelId());

    private final int limit;
    /** The largest seen so far, smallest of them at the head (the one to drop first). */
    private final PriorityQueue<Difference> kept;

    public LargestCtrDiffs(int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must be >= 0, got " + limit);
        this.limit = limit;
        this.kept = new PriorityQueue<>(limit + 1, LARGEST_FIRST.reversed());
    }

    @Override
    public void accept(ReconciliationDiffsTable.Row row) {
        if (limit == 0 || row.status() != Status.MISMATCH) return;
        BigDecimal stream = Ratio.CTR.of(row.stream()), fin = Ratio.CTR.of(row.batch());
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
