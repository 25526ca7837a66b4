package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The columns every window table and view shares — {@code window_start, window_end, campaign_id, channel_id},
 * then the metrics — bound, read and range-queried in one place, so the table classes only add their own columns.
 */
public final class WindowColumns {
    /** Reads one result row into a table's own row type. */
    @FunctionalInterface
    public interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private WindowColumns() {}

    /** Binds the key columns to parameters {@code first .. first + 3}; returns the next free index. */
    public static int bindKey(PreparedStatement ps, int first, WindowKey key, long windowEndMillis)
            throws SQLException {
        Timestamps.bind(ps, first, key.windowStartMillis());
        Timestamps.bind(ps, first + 1, windowEndMillis);
        ps.setString(first + 2, key.campaignId());
        ps.setString(first + 3, key.channelId());
        return first + 4;
    }

    /** Binds the key columns and the metrics ({@code window_start .. events}); returns the next free index. */
    public static int bindRow(PreparedStatement ps, int first, WindowRow row) throws SQLException {
        return MetricColumns.bind(ps, bindKey(ps, first, row.key(), row.windowEndMillis()), row.metrics());
    }

    public static WindowKey readKey(ResultSet rs) throws SQLException {
        return new WindowKey(
                Timestamps.read(rs, "window_start"), rs.getString("campaign_id"), rs.getString("channel_id"));
    }

    public static WindowRow readRow(ResultSet rs) throws SQLException {
        return new WindowRow(readKey(rs), Timestamps.read(rs, "window_end"), MetricColumns.read(rs));
    }

    /** Every row of {@code relation} whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static <T> List<T> readRange(
            Connection conn, String relation, long fromMillis, long toMillis, RowReader<T> reader) throws SQLException {
        String sql = "SELECT * FROM " + relation + " WHERE window_start >= ? AND window_start < ?"
                + " ORDER BY window_start, campaign_id, channel_id";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            List<T> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) rows.add(reader.read(rs));
            }
            return rows;
        }
    }
}
