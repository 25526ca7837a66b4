package dev.recount.reconcile;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A run's diffs per window and per campaign-day ({@link ReconcileStatements#diffCounts}).
 *
 * @param windows      by window start
 * @param campaignDays by campaign-day
 */
record DiffCounts(Map<Long, Counts> windows, Map<CampaignDay, Counts> campaignDays) {
    DiffCounts {
        windows = Map.copyOf(windows);
        campaignDays = Map.copyOf(campaignDays);
    }

    record CampaignDay(String campaignId, LocalDate day) {}

    /**
     * How many keys of a group differ, by status, how many of those are beyond tolerance, and their summed stream −
     * batch difference per metric (negative where the batch has more).
     */
    record Counts(
            long mismatched, long missingInStream, long missingInBatch, long beyondTolerance, WindowMetrics delta) {
        static final Counts NONE = new Counts(0, 0, 0, 0, WindowMetrics.ZERO);

        Counts {
            Objects.requireNonNull(delta, "delta");
        }
    }

    Counts window(long windowStartMillis) {
        return windows.getOrDefault(windowStartMillis, Counts.NONE);
    }

    Counts campaignDay(CampaignDay cd) {
        return campaignDays.getOrDefault(cd, Counts.NONE);
    }

    static DiffCounts read(Connection conn, long runId, ScopeDays days) throws SQLException {
        Map<Long, Counts> windows = new HashMap<>();
        Map<CampaignDay, Counts> campaignDays = new HashMap<>();
        try (PreparedStatement ps = ReconcileStatements.diffCounts(runId, days).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Counts c = new Counts(
                        rs.getLong("mismatched"),
                        rs.getLong("missing_in_stream"),
                        rs.getLong("missing_in_batch"),
                        rs.getLong("beyond_tolerance"),
                        MetricColumns.read(rs, "delta_"));
                if (rs.getInt("g") == 1) {
                    windows.put(Timestamps.read(rs, "window_start"), c);
                } else {
                    campaignDays.put(new CampaignDay(rs.getString("campaign_id"), days.day(rs.getInt("day"))), c);
                }
            }
        }
        return new DiffCounts(windows, campaignDays);
    }
}
