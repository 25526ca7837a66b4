package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
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
        WindowRow w = row.window();
        Timestamps.bind(ps, 1, w.key().windowStartMillis());
        Timestamps.bind(ps, 2, w.windowEndMillis());
        ps.setString(3, w.key().campaignId());
        ps.setString(4, w.key().channelId());
        int next = MetricColumns.bind(ps, 5, w.metrics());
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
        String sql = "SELECT * FROM " + TABLE + " WHERE window_start >= ? AND window_start < ?"
                + " ORDER BY window_start, campaign_id, channel_id";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            List<Row> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    WindowKey key = new WindowKey(Timestamps.read(rs, "window_start"), rs.getString("campaign_id"),
                            rs.getString("channel_id"));
                    rows.add(new Row(new WindowRow(key, Timestamps.read(rs, "window_end"), MetricColumns.read(rs)),
                            rs.getInt("revision")));
                }
            }
            return rows;
        }
    }
}
