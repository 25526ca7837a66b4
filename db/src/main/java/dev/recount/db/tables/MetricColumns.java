package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.stream.Collectors;

/** The five metric columns, named by {@link Metric#column()}, in {@link Metric} order in every table. */
public final class MetricColumns {
    /** "impressions, clicks, conversions, spend_micros, events" */
    public static final String LIST = Arrays.stream(Metric.values()).map(Metric::column).collect(Collectors.joining(", "));
    /** "impressions = EXCLUDED.impressions, ..." for upserts. */
    public static final String SET_FROM_EXCLUDED = Arrays.stream(Metric.values())
            .map(m -> m.column() + " = EXCLUDED." + m.column()).collect(Collectors.joining(", "));
    public static final int COUNT = Metric.values().length;

    private MetricColumns() {}

    /** Binds the metrics to parameters {@code first .. first + 4}; returns the next free index. */
    public static int bind(PreparedStatement ps, int first, WindowMetrics m) throws SQLException {
        int i = first;
        for (Metric metric : Metric.values()) ps.setLong(i++, m.get(metric));
        return i;
    }

    public static WindowMetrics read(ResultSet rs, String prefix) throws SQLException {
        return new WindowMetrics(rs.getLong(prefix + "impressions"), rs.getLong(prefix + "clicks"),
                rs.getLong(prefix + "conversions"), rs.getLong(prefix + "spend_micros"), rs.getLong(prefix + "events"));
    }

    public static WindowMetrics read(ResultSet rs) throws SQLException {
        return read(rs, "");
    }
}
