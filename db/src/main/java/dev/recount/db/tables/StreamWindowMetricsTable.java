package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * {@code stream_window_metrics}: the stream job's results, one row per window key.
 *
 * <p>The upsert only replaces a row with a revision at least as high: a replayed older firing never
 * overwrites a newer one, while re-delivering the same revision (after a failed commit) is harmless.
 */
public final class StreamWindowMetricsTable {
    public static final String TABLE = "stream_window_metrics";

    public static final String UPSERT = "INSERT INTO " + TABLE
            + " (window_start, window_end, campaign_id, channel_id, " + MetricColumns.LIST + ", revision, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now())"
            + " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end, "
            + MetricColumns.SET_FROM_EXCLUDED + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
            + " WHERE " + TABLE + ".revision <= EXCLUDED.revision";

    /** A stream result: the window row and the firing that produced it (1 = first firing). */
    public record Row(WindowRow window, int revision) implements java.io.Serializable {
        public Row {
            if (revision < 1) throw new IllegalArgumentException("revision must be >= 1, got " + revision);
        }
    }

    private StreamWindowMetricsTable() {}

    public static void bind(PreparedStatement ps, Row row) throws SQLException {
        int next = WindowColumns.bindRow(ps, 1, row.window());
        ps.setInt(next, row.revision());
    }

    /** Upserts {@code rows} as one JDBC batch on {@code conn}; the caller owns the transaction. */
    public static void upsert(Connection conn, List<Row> rows) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            for (Row r : rows) {
                bind(ps, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(conn, TABLE, fromMillis, toMillis,
                rs -> new Row(WindowColumns.readRow(rs), rs.getInt("revision")));
    }
}
