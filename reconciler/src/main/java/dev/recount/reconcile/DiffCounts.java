package dev.recount.reconcile;

import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.Map;

/**
 * A run's diffs counted per window and per campaign-day ({@link ReconcileStatements#diffCounts}).
 *
 * @param windows      by window start
 * @param campaignDays by {@link #campaignDayKey}
 */
record DiffCounts(Map<Long, Counts> windows, Map<String, Counts> campaignDays) {
    /** How many keys of a group differ, by status, and how many of those are beyond tolerance. */
    record Counts(long mismatched, long missingInStream, long missingInBatch, long beyondTolerance) {
        static final Counts NONE = new Counts(0, 0, 0, 0);
    }

    static String campaignDayKey(String campaignId, LocalDate day) {
        return day + " " + campaignId;
    }

    Counts window(long windowStartMillis) {
        return windows.getOrDefault(windowStartMillis, Counts.NONE);
    }

    Counts campaignDay(String campaignId, LocalDate day) {
        return campaignDays.getOrDefault(campaignDayKey(campaignId, day), Counts.NONE);
    }

    static DiffCounts read(Connection conn, long runId, ZoneId zone) throws SQLException {
        Map<Long, Counts> windows = new HashMap<>();
        Map<String, Counts> campaignDays = new HashMap<>();
        try (PreparedStatement ps = ReconcileStatements.diffCounts(runId, zone).prepare(conn); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Counts c = new Counts(rs.getLong("mismatched"), rs.getLong("missing_in_stream"),
                        rs.getLong("missing_in_batch"), rs.getLong("beyond_tolerance"));
                if (rs.getInt("g") == 1) {
                    windows.put(Timestamps.read(rs, "window_start"), c);
                } else {
                    campaignDays.put(campaignDayKey(rs.getString("campaign_id"), rs.getObject("day", LocalDate.class)), c);
                }
            }
        }
        return new DiffCounts(windows, campaignDays);
    }
}
