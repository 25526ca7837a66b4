package dev.recount.reconcile;

import java.time.LocalDate;
import java.util.List;
import java.util.Objects;

/** What the comparison found: totals for the whole scope, per window, and per campaign per day. */
public record Comparison(GroupTotals range, List<WindowTotal> windows, List<CampaignDayTotal> campaignDays) {
    public Comparison {
        Objects.requireNonNull(range, "range");
        windows = List.copyOf(windows);
        campaignDays = List.copyOf(campaignDays);
    }

    /** One window (all keys starting at {@code windowStartMillis}). */
    public record WindowTotal(long windowStartMillis, long windowEndMillis, GroupTotals totals) {}

    /** One campaign on one day (midnight to midnight in the configured time zone), over all its channels. */
    public record CampaignDayTotal(String campaignId, LocalDate day, GroupTotals totals) {}
}
