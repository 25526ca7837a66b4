package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@code window_metrics}: the serving view (CONTRACT §4) that dashboards and finance read. Read-only: it is
 * changed through {@link StreamWindowMetricsTable}, {@link BatchWindowMetricsTable} and
 * {@link WindowCorrectionsTable}.
 */
public final class WindowMetricsView {
    public static final String VIEW = "window_metrics";

    public enum Source {
        STREAM,
        BATCH;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** One served key: its values, where they come from, and whether a reconciliation finalized them. */
    public record Row(WindowRow window, Source source, boolean isFinal) {}

    private WindowMetricsView() {}

    public static Optional<Row> find(Connection conn, WindowKey key) throws SQLException {
        String sql = "SELECT * FROM " + VIEW + " WHERE window_start = ? AND campaign_id = ? AND channel_id = ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, key.windowStartMillis());
            ps.setString(2, key.campaignId());
            ps.setString(3, key.channelId());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return Optional.empty();
                Row row = read(rs);
                if (rs.next()) throw new IllegalStateException(VIEW + " serves key " + key + " twice");
                return Optional.of(row);
            }
        }
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(conn, VIEW, fromMillis, toMillis, WindowMetricsView::read);
    }

    /** The summed metrics served for windows starting in {@code [fromMillis, toMillis)}. */
    public static WindowMetrics totals(Connection conn, long fromMillis, long toMillis) throws SQLException {
        String sums = Arrays.stream(Metric.values())
                .map(m -> "coalesce(sum(" + m.column() + "), 0)::" + m.sqlType() + " AS " + m.column())
                .collect(Collectors.joining(", "));
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT " + sums + " FROM " + VIEW + " WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return MetricColumns.read(rs);
            }
        }
    }

    private static Row read(ResultSet rs) throws SQLException {
        return new Row(
                WindowColumns.readRow(rs),
                Source.valueOf(rs.getString("source").toUpperCase(Locale.ROOT)),
                rs.getBoolean("is_final"));
    }
}
