package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * {@code batch_attribution_metrics} and its staging table, with {@link BatchWindowMetricsTable}'s mechanics: a run
 * loads its rows into {@code batch_attribution_metrics_staging}, then {@link #replaceFromStaging} swaps them in for
 * its range in one transaction (the caller's, together with the window metrics and the run's status): keys without
 * clicks or conversions vanish, rerunning gives identical rows, a crash before the commit leaves the previous result.
 */
public final class BatchAttributionMetricsTable {
    public static final String TABLE = "batch_attribution_metrics";
    public static final String STAGING_TABLE = "batch_attribution_metrics_staging";
    /** Column order of the staging table, for Spark's JDBC writer. */
    public static final String STAGING_COLUMNS =
            "run_id, window_start, window_end, campaign_id, channel_id, " + AttributionRow.METRIC_LIST;

    private BatchAttributionMetricsTable() {}

    public static void insertStaging(Connection conn, long runId, List<AttributionRow> rows) throws SQLException {
        String sql = "INSERT INTO " + STAGING_TABLE + " (" + STAGING_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            for (AttributionRow r : rows) {
                ps.setLong(1, runId);
                r.bind(ps, 2);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /**
     * Replaces every row whose window starts in {@code range} with the staged rows of {@code runId} and clears them;
     * does not commit. Staged rows outside the range are an error.
     */
    public static BatchWindowMetricsTable.ReplaceResult replaceFromStaging(
            Connection conn, BatchWindowMetricsTable.Range range, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM " + STAGING_TABLE
                + " WHERE run_id = ? AND NOT (window_start >= ? AND window_start < ?)")) {
            ps.setLong(1, runId);
            Timestamps.bind(ps, 2, range.fromMillis());
            Timestamps.bind(ps, 3, range.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    throw new IllegalStateException("run " + runId + " staged " + rs.getLong(1)
                            + " attribution rows outside its range " + range);
                }
            }
        }
        long deleted;
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + TABLE
                + " t WHERE t.window_start >= ? AND t.window_start < ? AND NOT EXISTS (SELECT 1 FROM " + STAGING_TABLE
                + " s WHERE s.run_id = ? AND s.window_start = t.window_start AND s.campaign_id = t.campaign_id"
                + " AND s.channel_id = t.channel_id)")) {
            Timestamps.bind(ps, 1, range.fromMillis());
            Timestamps.bind(ps, 2, range.toMillis());
            ps.setLong(3, runId);
            deleted = ps.executeUpdate();
        }
        // As for the window metrics: a row computed exactly as it stands is left alone (its run_id stays the run
        // that last changed it).
        long written;
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + TABLE
                + " (window_start, window_end, campaign_id, channel_id, " + AttributionRow.METRIC_LIST
                + ", run_id, computed_at) SELECT window_start, window_end, campaign_id, channel_id, "
                + AttributionRow.METRIC_LIST + ", run_id, now() FROM " + STAGING_TABLE + " WHERE run_id = ?"
                + " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end, "
                + AttributionRow.SET_FROM_EXCLUDED
                + ", run_id = EXCLUDED.run_id, computed_at = EXCLUDED.computed_at"
                + " WHERE (" + TABLE + ".window_end, " + AttributionRow.qualified(TABLE + ".") + ")"
                + " IS DISTINCT FROM (EXCLUDED.window_end, " + AttributionRow.qualified("EXCLUDED.") + ")")) {
            ps.setLong(1, runId);
            written = ps.executeUpdate();
        }
        long staged = clearStaging(conn, runId);
        return new BatchWindowMetricsTable.ReplaceResult(written, staged - written, deleted);
    }

    /** Drops a run's staged rows (after a replace, or to clean up a failed run); returns how many there were. */
    public static long clearStaging(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + STAGING_TABLE + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            return ps.executeUpdate();
        }
    }

    public static List<AttributionRow> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(conn, TABLE, fromMillis, toMillis, AttributionRow::read);
    }
}
