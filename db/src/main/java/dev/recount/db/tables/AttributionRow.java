package dev.recount.db.tables;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.window.WindowKey;
import java.io.Serializable;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;

/**
 * One window key of a metric set (window of the click, the click's dimensions) with its attribution metrics, as stored in the stream and batch attribution
 * tables; binds and reads the shared columns ({@code window_start .. attributed_spend_micros}) in one place.
 */
public record AttributionRow(WindowKey key, long windowEndMillis, AttributionMetrics metrics) implements Serializable {
    /** "attributed_clicks, attributed_conversions, unattributed_clicks, attributed_spend_micros" */
    public static final String METRIC_LIST = String.join(", ", AttributionMetrics.COLUMNS);
    /** "attributed_clicks = EXCLUDED.attributed_clicks, ..." for upserts. */
    public static final String SET_FROM_EXCLUDED = String.join(
            ", ",
            List.of(AttributionMetrics.COLUMNS).stream()
                    .map(c -> c + " = EXCLUDED." + c)
                    .toList());

    /** "{prefix}attributed_clicks, ...": the metric columns of one side of a comparison. */
    public static String qualified(String prefix) {
        return String.join(
                ", ",
                List.of(AttributionMetrics.COLUMNS).stream()
                        .map(c -> prefix + c)
                        .toList());
    }

    public AttributionRow {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(metrics, "metrics");
        if (windowEndMillis <= key.windowStartMillis()) {
            throw new IllegalArgumentException("windowEndMillis " + windowEndMillis
                    + " must be after windowStartMillis " + key.windowStartMillis());
        }
    }

    /** Binds the window, dimensions and metrics of {@code columns}' set; returns the next free index. */
    public int bind(PreparedStatement ps, int first, SetColumns columns) throws SQLException {
        int i = columns.bindWindow(ps, first, key, windowEndMillis);
        ps.setLong(i++, metrics.attributedClicks());
        ps.setLong(i++, metrics.attributedConversions());
        ps.setLong(i++, metrics.unattributedClicks());
        ps.setBigDecimal(i++, new BigDecimal(metrics.attributedSpendMicros()));
        return i;
    }

    public static AttributionRow read(ResultSet rs, SetColumns columns) throws SQLException {
        return new AttributionRow(columns.readKey(rs), Timestamps.read(rs, "window_end"), readMetrics(rs, ""));
    }

    public static AttributionMetrics readMetrics(ResultSet rs, String prefix) throws SQLException {
        return new AttributionMetrics(
                rs.getLong(prefix + "attributed_clicks"),
                rs.getLong(prefix + "attributed_conversions"),
                rs.getLong(prefix + "unattributed_clicks"),
                SetColumns.exact(rs, prefix + "attributed_spend_micros"));
    }
}
