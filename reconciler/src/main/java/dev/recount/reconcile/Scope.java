package dev.recount.reconcile;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongPredicate;

/**
 * What one reconciliation covers: the windows starting in {@code [fromMillis, toMillis)} and, for a batch run that
 * recomputed only some windows, just those windows ({@code windowStarts}; null = every window in range), of the
 * metric sets it names ({@code sets}; null = every set the run is given). A batch run that recomputed other windows
 * for each set (an `affected` run: the sets have windows of their own sizes, and each set's too-late events named its
 * own windows) gives each set its own ({@code setWindows}), and then no {@code windowStarts}.
 *
 * @param batchRunId the batch run being reconciled, or null for a plain range or date
 * @param label      how the scope was asked for, for messages and reports (e.g. "date 2026-11-28")
 * @param sets       the metric sets covered, null for every set the run is given
 * @param setWindows per set, the windows covered (each non-empty), null when {@code windowStarts} holds for all
 */
public record Scope(
        long fromMillis,
        long toMillis,
        List<Long> windowStarts,
        Long batchRunId,
        String label,
        List<String> sets,
        Map<String, List<Long>> setWindows) {
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
        if (sets != null) {
            if (sets.isEmpty()) throw new IllegalArgumentException("sets must not be empty (use null for every set)");
            sets = List.copyOf(sets);
        }
        if (setWindows != null) {
            if (windowStarts != null)
                throw new IllegalArgumentException("give windowStarts or windows per set, not both");
            Map<String, List<Long>> copy = new TreeMap<>();
            setWindows.forEach((set, windows) -> {
                if (windows.isEmpty())
                    throw new IllegalArgumentException("set " + set + " names no window (leave the set out instead)");
                copy.put(set, List.copyOf(windows));
            });
            setWindows = java.util.Collections.unmodifiableMap(copy);
            if (sets == null || !Set.copyOf(sets).equals(setWindows.keySet()))
                throw new IllegalArgumentException(
                        "sets " + sets + " must be the sets with windows " + setWindows.keySet());
        }
    }

    /** Every set the run is given, over {@code windowStarts} (null: the whole range). */
    public Scope(long fromMillis, long toMillis, List<Long> windowStarts, Long batchRunId, String label) {
        this(fromMillis, toMillis, windowStarts, batchRunId, label, null, null);
    }

    public static Scope range(Instant from, Instant to, String label) {
        return new Scope(from.toEpochMilli(), to.toEpochMilli(), null, null, label);
    }

    /** Whether the scope covers metric set {@code set}. */
    public boolean covers(String set) {
        return sets == null || sets.contains(set);
    }

    /**
     * The scope of one metric set it {@link #covers}: the range, with the set's own windows when it has some. What
     * every per-set statement takes ({@link #windowStarts} is the set's).
     */
    public Scope of(String set) {
        if (!covers(set)) throw new IllegalArgumentException(label + " does not cover metric set " + set);
        List<Long> windows = setWindows == null ? windowStarts : setWindows.get(set);
        return new Scope(fromMillis, toMillis, windows, batchRunId, label);
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
