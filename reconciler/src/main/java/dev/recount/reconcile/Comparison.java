package dev.recount.reconcile;

import java.time.LocalDate;
import java.util.List;
import java.util.Objects;

/**
 * What the comparison of one metric set found: totals for the whole scope, per window, and per value of the set's
 * first dimension per day (the default set: per campaign per day).
 */
public record Comparison(GroupTotals range, List<WindowTotal> windows, List<DayTotal> days) {
    public Comparison {
        Objects.requireNonNull(range, "range");
        windows = List.copyOf(windows);
        days = List.copyOf(days);
    }

    /** One window (all keys starting at {@code windowStartMillis}). */
    public record WindowTotal(long windowStartMillis, long windowEndMillis, GroupTotals totals) {}

    /**
     * One value of the set's first dimension on one day (midnight to midnight in the configured time zone), over all
     * its other dimensions' values: for the default set, one campaign on one day over all its channels.
     */
    public record DayTotal(String value, LocalDate day, GroupTotals totals) {}
}
