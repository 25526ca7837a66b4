package dev.recount.reconcile;

import java.time.Instant;
import java.util.List;

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

    public Instant from() {
        return Instant.ofEpochMilli(fromMillis);
    }

    public Instant to() {
        return Instant.ofEpochMilli(toMillis);
    }
}
