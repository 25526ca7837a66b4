package dev.recount.reconcile;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongPredicate;

/**
 * What one reconciliation covers: the windows starting in {@code [fromMillis, toMillis)} and, for a batch run
 * that recomputed only some windows, just those windows ({@code windowStarts}; null = every window in range).
 *
 * @param batchRunId the batch run being reconciled, or null for a plain range or date
 * @param label      how the scope was asked for, for messages and reports (e.g. "date 2026-11-28")
 */
public record Scope(long fromMillis, long toMillis, List<Long> windowStarts, Long batchRunId, String label) {
    public Scope {
        if (toMillis <= fromMillis) {
            throw new IllegalArgumentException("--to (" + Instant.ofEpochMilli(toMillis) + ") must be after --from ("
                    + Instant.ofEpochMilli(fromMillis) + ")");
        }
        if (windowStarts != null) {
            if (windowStarts.isEmpty())
                throw new IllegalArgumentException("windowStarts must not be empty (use null for the whole range)");
            windowStarts = List.copyOf(windowStarts);
        }
    }

    public static Scope range(Instant from, Instant to, String label) {
        return new Scope(from.toEpochMilli(), to.toEpochMilli(), null, null, label);
    }

    /**
     * For window starts within the range: whether the scope covers the window (every one when it names none). A
     * set is built once, so testing every window of a day against a scope that names most of them stays cheap.
     */
    public LongPredicate coversWindow() {
        if (windowStarts == null) return w -> true;
        Set<Long> named = new HashSet<>(windowStarts);
        return named::contains;
    }

    /** For any window start: whether it lies in the range and the scope covers it ({@link #coversWindow}). */
    public LongPredicate holdsWindow() {
        LongPredicate covered = coversWindow();
        return w -> w >= fromMillis && w < toMillis && covered.test(w);
    }

    public Instant from() {
        return Instant.ofEpochMilli(fromMillis);
    }

    public Instant to() {
        return Instant.ofEpochMilli(toMillis);
    }
}
