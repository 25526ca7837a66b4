package dev.recount.reconcile.report;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
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
 * The {@code limit} diffs of one metric set per status that moved it the most — by the summed |stream − batch| of
 * its sums (spend, for the default set), then of its counts, then by key — collected while the diffs stream past once
 * (into the set's diffs file), so the report needs no query of its own per list. Same order as {@link
 * ReconciliationDiffsTable#largest}.
 */
public final class LargestDiffs implements Consumer<ReconciliationDiffsTable.Row> {
    /** Window start, then the dimensions in the set's order. */
    static final Comparator<WindowKey> KEY_ORDER = (a, b) -> {
        int c = Long.compare(a.windowStartMillis(), b.windowStartMillis());
        for (int i = 0; c == 0 && i < a.dimensions().size(); i++)
            c = a.dimension(i).compareTo(b.dimension(i));
        return c;
    };

    /** Largest first. */
    final Comparator<ReconciliationDiffsTable.Row> largestFirst;

    private final int limit;
    private final int[] sums;
    private final int[] counts;
    /** Per status, the largest seen so far, smallest of them at the head (the one to drop first). */
    private final Map<Status, PriorityQueue<ReconciliationDiffsTable.Row>> kept = new EnumMap<>(Status.class);

    public LargestDiffs(MetricSet set, int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must be >= 0, got " + limit);
        this.limit = limit;
        List<Integer> s = new ArrayList<>(), c = new ArrayList<>();
        List<Measure> measures = set.measures();
        for (int i = 0; i < measures.size(); i++) (measures.get(i).isCount() ? c : s).add(i);
        this.sums = s.stream().mapToInt(Integer::intValue).toArray();
        this.counts = c.stream().mapToInt(Integer::intValue).toArray();
        this.largestFirst = Comparator.comparing((ReconciliationDiffsTable.Row r) -> moved(r, sums))
                .reversed()
                .thenComparing(Comparator.comparing((ReconciliationDiffsTable.Row r) -> moved(r, counts))
                        .reversed())
                .thenComparing(ReconciliationDiffsTable.Row::key, KEY_ORDER);
    }

    @Override
    public void accept(ReconciliationDiffsTable.Row row) {
        if (limit == 0) return;
        PriorityQueue<ReconciliationDiffsTable.Row> q =
                kept.computeIfAbsent(row.status(), st -> new PriorityQueue<>(limit + 1, largestFirst.reversed()));
        // Most rows are not among the largest: one comparison with the smallest kept tells, instead of the heap's
        // several (each sums the differences anew).
        if (q.size() == limit && largestFirst.compare(row, q.peek()) > 0) return;
        q.add(row);
        if (q.size() > limit) q.poll();
    }

    /** The largest diffs of {@code status}, largest first. */
    public List<ReconciliationDiffsTable.Row> of(Status status) {
        List<ReconciliationDiffsTable.Row> rows = new ArrayList<>(kept.getOrDefault(status, new PriorityQueue<>()));
        rows.sort(largestFirst);
        return rows;
    }

    private static BigInteger moved(ReconciliationDiffsTable.Row r, int[] measures) {
        BigInteger sum = BigInteger.ZERO;
        for (int m : measures) sum = sum.add(r.difference(m).abs());
        return sum;
    }
}
