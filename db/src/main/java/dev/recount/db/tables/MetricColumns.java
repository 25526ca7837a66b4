package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The five metric columns, named by {@link Metric#column()}, in {@link Metric} order in every table. Counts are
 * {@code bigint}, bound and read as longs; spend is {@code numeric(38,0)}, bound and read as a scale-0
 * {@link BigDecimal}, so no value passes through a long or a double.
 */
public final class MetricColumns {
    /** "impressions, clicks, conversions, spend_micros, events" */
    public static final String LIST =
            Arrays.stream(Metric.values()).map(Metric::column).collect(Collectors.joining(", "));
    /** "impressions = EXCLUDED.impressions, ..." for upserts. */
    public static final String SET_FROM_EXCLUDED = Arrays.stream(Metric.values())
            .map(m -> m.column() + " = EXCLUDED." + m.column())
            .collect(Collectors.joining(", "));

    public static final int COUNT = Metric.values().length;

    /** "{prefix}impressions, {prefix}clicks, ...": the columns of one side of a comparison. */
    public static String qualified(String prefix) {
        return Arrays.stream(Metric.values()).map(m -> prefix + m.column()).collect(Collectors.joining(", "));
    }

    private MetricColumns() {}

    /** Binds the metrics to parameters {@code first .. first + 4}; returns the next free index. */
    public static int bind(PreparedStatement ps, int first, WindowMetrics m) throws SQLException {
        int i = first;
        for (Metric metric : Metric.values()) {
            if (metric.isCount()) ps.setLong(i++, m.count(metric));
            else ps.setBigDecimal(i++, new BigDecimal(m.get(metric)));
        }
        return i;
    }

    /** Binds one metric's value, or NULL, to parameter {@code index} with the column's type. */
    public static void bindNullable(PreparedStatement ps, int index, Metric metric, BigInteger value)
            throws SQLException {
        if (value == null) {
            ps.setNull(index, metric.isCount() ? Types.BIGINT : Types.NUMERIC);
        } else if (metric.isCount()) {
            ps.setLong(index, value.longValueExact());
        } else {
            ps.setBigDecimal(index, new BigDecimal(value));
        }
    }

    /** The SQL element type of an array of {@code metric}'s values, as {@code createArrayOf} takes it. */
    public static String arrayType(Metric metric) {
        return metric.isCount() ? "bigint" : "numeric";
    }

    /**
     * An array for {@code n} values of {@code metric}, of the element type the driver sends as {@link #arrayType}:
     * {@code Long[]} or {@code BigDecimal[]}; fill it with {@link #arrayValue}.
     */
    public static Object[] newArray(Metric metric, int n) {
        return metric.isCount() ? new Long[n] : new BigDecimal[n];
    }

    public static Object arrayValue(Metric metric, WindowMetrics m) {
        return metric.isCount() ? (Object) m.count(metric) : new BigDecimal(m.get(metric));
    }

    public static WindowMetrics read(ResultSet rs, String prefix) throws SQLException {
        return new WindowMetrics(
                rs.getLong(prefix + "impressions"),
                rs.getLong(prefix + "clicks"),
                rs.getLong(prefix + "conversions"),
                exact(rs, prefix + "spend_micros"),
                rs.getLong(prefix + "events"));
    }

    public static WindowMetrics read(ResultSet rs) throws SQLException {
        return read(rs, "");
    }

    /**
     * A {@code numeric} column holding a whole number (any scale-0 value, or a sum of them) as an exact
     * {@link BigInteger}; NULL is null. A fractional value is an error, never rounded.
     */
    public static BigInteger exact(ResultSet rs, String column) throws SQLException {
        BigDecimal v = rs.getBigDecimal(column);
        if (v == null) return null;
        try {
            return v.toBigIntegerExact();
        } catch (ArithmeticException e) {
            throw new SQLException("column " + column + " holds " + v.toPlainString() + ", not a whole number", e);
        }
    }
}
