package dev.recount.reconcile.report;

import dev.recount.core.metrics.Metric;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * The {@code limit} diffs per status that moved spend the most — by |stream − batch| spend, then by the summed
 * |difference| of the other metrics, then by key — collected while the diffs stream past once (into diffs.csv),
 * so the report needs no query of its own per list. Same order as {@link ReconciliationDiffsTable#largest}.
 */
public final class LargestDiffs implements Consumer<ReconciliationDiffsTable.Row> {
    /** Largest first. */
    static final Comparator<ReconciliationDiffsTable.Row> LARGEST_FIRST = Comparator.comparing(
                    (ReconciliationDiffsTable.Row r) ->
                            r.difference(Metric.SPEND_MICROS).abs())
            .reversed()
            .thenComparing(Comparator.comparing(LargestDiffs::otherMetricsMoved).reversed())
            .thenComparingLong(r -> r.key().windowStartMillis())
            .thenComparing(r -> r.key().campaignId())
            .thenComparing(r -> r.key().channelId());

    private final int limit;
    /** Per status, the largest seen so far, smallest of them at the head (the one to drop first). */
    private final Map<Status, PriorityQueue<ReconciliationDiffsTable.Row>> kept = new EnumMap<>(Status.class);

    public LargestDiffs(int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must be >= 0, got " + limit);
        this.limit = limit;
    }

    @Override
    public void accept(ReconciliationDiffsTable.Row row) {
        if (limit == 0) return;
        PriorityQueue<ReconciliationDiffsTable.Row> q =
                kept.computeIfAbsent(row.status(), s -> new PriorityQueue<>(limit + 1, LARGEST_FIRST.reversed()));
        // Most rows are not among the largest: one comparison with the smallest kept tells, instead of the heap's
        // several (each sums the other metrics' differences anew).
        if (q.size() == limit && LARGEST_FIRST.compare(row, q.peek()) > 0) return;
        q.add(row);
        if (q.size() > limit) q.poll();
    }

    /** The largest diffs of {@code status}, largest first. */
    public List<ReconciliationDiffsTable.Row> of(Status status) {
        List<ReconciliationDiffsTable.Row> rows = new ArrayList<>(kept.getOrDefault(status, new PriorityQueue<>()));
        rows.sort(LARGEST_FIRST);
        return rows;
    }

    private static BigInteger otherMetricsMoved(ReconciliationDiffsTable.Row r) {
        BigInteger sum = BigInteger.ZERO;
        for (Metric m : Metric.values()) {
            if (m != Metric.SPEND_MICROS) sum = sum.add(r.difference(m).abs());
        }
        return sum;
    }
}
