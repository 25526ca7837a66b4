package dev.recount.db.tables;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.sets.SetTables;
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
    /** The default set's tables; {@link #table()} and {@link #stagingTable()} are this instance's. */
    public static final String TABLE = "batch_attribution_metrics";

    public static final String STAGING_TABLE = "batch_attribution_metrics_staging";

    private final SetColumns columns;
    private final String table;
    private final String staging;

    public BatchAttributionMetricsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.batchAttributionMetrics();
        this.staging = tables.batchAttributionMetricsStaging();
    }

    public String table() {
        return table;
    }

    public String stagingTable() {
        return staging;
    }

    /** Column order of the staging table, for Spark's JDBC writer. */
    public String stagingColumns() {
        return "run_id, " + columns.windowList() + ", " + AttributionRow.METRIC_LIST;
    }

    public void insertStaging(Connection conn, long runId, List<AttributionRow> rows) throws SQLException {
        int n = 1 + 2 + columns.dimensionCount() + AttributionMetrics.COLUMNS.length;
        String sql = "INSERT INTO " + staging + " (" + stagingColumns() + ") VALUES (" + SetColumns.parameters(n) + ")";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            for (AttributionRow r : rows) {
                ps.setLong(1, runId);
                r.bind(ps, 2, columns);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /**
     * Replaces every row whose window starts in {@code range} with the staged rows of {@code runId} and clears them;
     * does not commit. Staged rows outside the range are an error.
     */
    public BatchWindowMetricsTable.ReplaceResult replaceFromStaging(
            Connection conn, BatchWindowMetricsTable.Range range, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM " + staging
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
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + table
                + " t WHERE t.window_start >= ? AND t.window_start < ? AND NOT EXISTS (SELECT 1 FROM " + staging
                + " s WHERE s.run_id = ? AND " + columns.sameKey("s", "t") + ")")) {
            Timestamps.bind(ps, 1, range.fromMillis());
            Timestamps.bind(ps, 2, range.toMillis());
            ps.setLong(3, runId);
            deleted = ps.executeUpdate();
        }
        // As for the window metrics: a row computed exactly as it stands is left alone (its run_id stays the run
        // that last changed it).
        long written;
        String rowColumns = columns.windowList() + ", " + AttributionRow.METRIC_LIST;
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + table + " (" + rowColumns
                + ", run_id, computed_at) SELECT " + rowColumns + ", run_id, now() FROM " + staging
                + " WHERE run_id = ? ON CONFLICT (" + columns.keyList() + ") DO UPDATE SET"
                + " window_end = EXCLUDED.window_end, " + AttributionRow.SET_FROM_EXCLUDED
                + ", run_id = EXCLUDED.run_id, computed_at = EXCLUDED.computed_at"
                + " WHERE (" + table + ".window_end, " + AttributionRow.qualified(table + ".") + ")"
                + " IS DISTINCT FROM (EXCLUDED.window_end, " + AttributionRow.qualified("EXCLUDED.") + ")")) {
            ps.setLong(1, runId);
            written = ps.executeUpdate();
        }
        long staged = clearStaging(conn, runId);
        return new BatchWindowMetricsTable.ReplaceResult(written, staged - written, deleted);
    }

    /** Drops a run's staged rows (after a replace, or to clean up a failed run); returns how many there were. */
    public long clearStaging(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + staging + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            return ps.executeUpdate();
        }
    }

    public List<AttributionRow> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(conn, table, fromMillis, toMillis, rs -> AttributionRow.read(rs, columns));
    }
}
