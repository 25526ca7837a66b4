package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code window_corrections}: the finalized value of each reconciled key, which {@code window_metrics} serves
 * instead of the stream's. {@code removed} hides a key the stream had but the batch recomputation did not.
 *
 * <p>The upsert only rewrites a row whose served content (window end, metrics, removed) differs, so
 * re-applying the same corrections leaves every row, including its run ids and {@code finalized_at}, as it was.
 */
public final class WindowCorrectionsTable {
    public static final String TABLE = "window_corrections";

    /** Column list for inserts, in the order {@link #bind} uses. */
    public static final String INSERT_COLUMNS = "window_start, window_end, campaign_id, channel_id, "
            + MetricColumns.LIST + ", removed, reconciliation_run_id, batch_run_id";

    /** Appended to an {@code INSERT INTO window_corrections (INSERT_COLUMNS) ...}: the change-only upsert. */
    public static final String ON_CONFLICT_UPDATE_IF_CHANGED =
            " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end, "
                    + MetricColumns.SET_FROM_EXCLUDED + ", removed = EXCLUDED.removed,"
                    + " reconciliation_run_id = EXCLUDED.reconciliation_run_id, batch_run_id = EXCLUDED.batch_run_id,"
                    + " finalized_at = now()"
                    + " WHERE (" + TABLE + ".window_end, " + MetricColumns.qualified(TABLE + ".") + ", " + TABLE
                    + ".removed)"
                    + " IS DISTINCT FROM (EXCLUDED.window_end, " + MetricColumns.qualified("EXCLUDED.")
                    + ", EXCLUDED.removed)";

    static final String UPSERT = "INSERT INTO " + TABLE + " (" + INSERT_COLUMNS + ")"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" + ON_CONFLICT_UPDATE_IF_CHANGED;

    /** A finalized key: the batch row's values, or (with {@code removed}) a key to hide, metrics zero. */
    public record Row(WindowRow window, boolean removed, long reconciliationRunId, Long batchRunId) {
        public Row {
            Objects.requireNonNull(window, "window");
        }
    }

    private WindowCorrectionsTable() {}

    public static void bind(PreparedStatement ps, Row r) throws SQLException {
        int next = WindowColumns.bindRow(ps, 1, r.window());
        ps.setBoolean(next, r.removed());
        ps.setLong(next + 1, r.reconciliationRunId());
        if (r.batchRunId() == null) ps.setNull(next + 2, Types.BIGINT);
        else ps.setLong(next + 2, r.batchRunId());
    }

    /** Row-wise change-only upsert; returns how many rows were inserted or changed. */
    public static int upsert(Connection conn, List<Row> rows) throws SQLException {
        int changed = 0;
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            for (Row r : rows) {
                bind(ps, r);
                ps.addBatch();
            }
            for (int n : ps.executeBatch()) changed += Math.max(n, 0);
        }
        return changed;
    }

    public static Optional<Row> find(Connection conn, WindowKey key) throws SQLException {
        String sql = "SELECT * FROM " + TABLE + " WHERE window_start = ? AND campaign_id = ? AND channel_id = ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, key.windowStartMillis());
            ps.setString(2, key.campaignId());
            ps.setString(3, key.channelId());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(conn, TABLE, fromMillis, toMillis, WindowCorrectionsTable::read);
    }

    private static Row read(ResultSet rs) throws SQLException {
        return new Row(WindowColumns.readRow(rs), rs.getBoolean("removed"), rs.getLong("reconciliation_run_id"), (Long)
                rs.getObject("batch_run_id"));
    }
}
