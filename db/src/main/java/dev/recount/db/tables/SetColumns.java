package dev.recount.db.tables;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The columns every window table and view of one metric set shares — {@code window_start, window_end}, the
 * dimensions, then the measures in the set's order — listed, bound, read and range-queried in one place, so the table
 * classes only add their own columns. Counts are {@code bigint}, bound and read as longs; sums are {@code
 * numeric(38,0)}, bound and read as scale-0 {@link BigDecimal}s, so no value passes through a double.
 */
public final class SetColumns {
    /** Reads one result row into a table's own row type. */
    @FunctionalInterface
    public interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private final MetricSet set;
    private final List<String> dimensions;
    private final List<Measure> measures;

    public SetColumns(MetricSet set) {
        this.set = Objects.requireNonNull(set, "set");
        this.dimensions = set.dimensionNames();
        this.measures = set.measures();
    }

    public SetColumns(SetTables tables) {
        this(tables.set());
    }

    public MetricSet set() {
        return set;
    }

    public int dimensionCount() {
        return dimensions.size();
    }

    public int measureCount() {
        return measures.size();
    }

    /** "campaign_id, channel_id" */
    public String dimensionList() {
        return String.join(", ", dimensions);
    }

    /** "{prefix}campaign_id, {prefix}channel_id" */
    public String dimensionList(String prefix) {
        return dimensions.stream().map(d -> prefix + d).collect(Collectors.joining(", "));
    }

    /** "window_start, campaign_id, channel_id": the primary key's columns. */
    public String keyList() {
        return "window_start, " + dimensionList();
    }

    /** "window_start, window_end, campaign_id, channel_id": a row's window and dimensions. */
    public String windowList() {
        return "window_start, window_end, " + dimensionList();
    }

    /** "impressions, clicks, ...": the measures' columns. */
    public String measureList() {
        return measureList("");
    }

    /** "{prefix}impressions, {prefix}clicks, ...": the columns of one side of a comparison. */
    public String measureList(String prefix) {
        return measures.stream().map(m -> prefix + m.name()).collect(Collectors.joining(", "));
    }

    /** "impressions = EXCLUDED.impressions, ..." for upserts. */
    public String measuresFromExcluded() {
        return measures.stream().map(m -> m.name() + " = EXCLUDED." + m.name()).collect(Collectors.joining(", "));
    }

    /** "window_start, window_end, campaign_id, channel_id, impressions, ..." */
    public String rowList() {
        return windowList() + ", " + measureList();
    }

    /** "a.window_start = b.window_start AND a.campaign_id = b.campaign_id AND ...": same key on two relations. */
    public String sameKey(String a, String b) {
        StringBuilder s = new StringBuilder(a + ".window_start = " + b + ".window_start");
        for (String d : dimensions)
            s.append(" AND ")
                    .append(a)
                    .append('.')
                    .append(d)
                    .append(" = ")
                    .append(b)
                    .append('.')
                    .append(d);
        return s.toString();
    }

    /** "window_start = ? AND campaign_id = ? AND channel_id = ?": one key, bound by {@link #bindKeyOnly}. */
    public String keyEquals() {
        StringBuilder s = new StringBuilder("window_start = ?");
        for (String d : dimensions) s.append(" AND ").append(d).append(" = ?");
        return s.toString();
    }

    /** "?, ?, ...": {@code n} parameters. */
    public static String parameters(int n) {
        return String.join(", ", java.util.Collections.nCopies(n, "?"));
    }

    /** Binds {@code window_start} and the dimensions (as {@link #keyEquals} orders them); returns the next index. */
    public int bindKeyOnly(PreparedStatement ps, int first, WindowKey key) throws SQLException {
        Timestamps.bind(ps, first, key.windowStartMillis());
        return bindDimensions(ps, first + 1, key);
    }

    /** Binds the window and the dimensions ({@link #windowList}); returns the next free index. */
    public int bindWindow(PreparedStatement ps, int first, WindowKey key, long windowEndMillis) throws SQLException {
        Timestamps.bind(ps, first, key.windowStartMillis());
        Timestamps.bind(ps, first + 1, windowEndMillis);
        return bindDimensions(ps, first + 2, key);
    }

    private int bindDimensions(PreparedStatement ps, int first, WindowKey key) throws SQLException {
        requireKey(key);
        for (int i = 0; i < dimensions.size(); i++) ps.setString(first + i, key.dimension(i));
        return first + dimensions.size();
    }

    /** Binds the window, dimensions and measures ({@link #rowList}); returns the next free index. */
    public int bindRow(PreparedStatement ps, int first, WindowRow row) throws SQLException {
        return bindValues(ps, bindWindow(ps, first, row.key(), row.windowEndMillis()), row.values());
    }

    /** Binds the measures in the set's order; returns the next free index. */
    public int bindValues(PreparedStatement ps, int first, MeasureValues values) throws SQLException {
        requireValues(values);
        int i = first;
        for (int m = 0; m < measures.size(); m++) {
            if (measures.get(m).isCount()) ps.setLong(i++, values.count(m));
            else ps.setBigDecimal(i++, new BigDecimal(values.get(m)));
        }
        return i;
    }

    /** Binds one measure's value, or NULL, with the column's type. */
    public void bindNullable(PreparedStatement ps, int index, int measure, BigInteger value) throws SQLException {
        boolean count = measures.get(measure).isCount();
        if (value == null) ps.setNull(index, count ? Types.BIGINT : Types.NUMERIC);
        else if (count) ps.setLong(index, value.longValueExact());
        else ps.setBigDecimal(index, new BigDecimal(value));
    }

    public WindowKey readKey(ResultSet rs) throws SQLException {
        return readKey(rs, Timestamps.read(rs, "window_start"));
    }

    /** The key of a result row whose window start was read already (or is known). */
    public WindowKey readKey(ResultSet rs, long windowStartMillis) throws SQLException {
        String[] values = new String[dimensions.size()];
        for (int i = 0; i < values.length; i++) values[i] = rs.getString(dimensions.get(i));
        return WindowKey.of(windowStartMillis, values);
    }

    public WindowRow readRow(ResultSet rs) throws SQLException {
        return new WindowRow(readKey(rs), Timestamps.read(rs, "window_end"), readValues(rs, ""));
    }

    /** The measures of columns {@code prefix + measure}; exact whatever their size. */
    public MeasureValues readValues(ResultSet rs, String prefix) throws SQLException {
        BigInteger[] v = new BigInteger[measures.size()];
        for (int m = 0; m < v.length; m++) {
            String column = prefix + measures.get(m).name();
            if (measures.get(m).isCount()) {
                long n = rs.getLong(column);
                if (rs.wasNull()) throw new SQLException("column " + column + " is NULL");
                v[m] = BigInteger.valueOf(n);
            } else {
                v[m] = exact(rs, column);
                if (v[m] == null) throw new SQLException("column " + column + " is NULL");
            }
        }
        return new MeasureValues(v);
    }

    /** The SQL element type of an array of measure {@code m}'s values, as {@code createArrayOf} takes it. */
    public String arrayType(int m) {
        return measures.get(m).isCount() ? "bigint" : "numeric";
    }

    /** An array for {@code n} values of measure {@code m} ({@code Long[]} or {@code BigDecimal[]}). */
    public Object[] newArray(int m, int n) {
        return measures.get(m).isCount() ? new Long[n] : new BigDecimal[n];
    }

    /** Measure {@code m} of {@code values} as an element of {@link #newArray}. */
    public Object arrayValue(int m, MeasureValues values) {
        return measures.get(m).isCount() ? (Object) values.count(m) : new BigDecimal(values.get(m));
    }

    /** "?::bigint[], ?::numeric[], ...": one array parameter per measure. */
    public String measureArrayParameters() {
        List<String> p = new ArrayList<>();
        for (int m = 0; m < measures.size(); m++) p.add("?::" + arrayType(m) + "[]");
        return String.join(", ", p);
    }

    /** Every row of {@code relation} whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public <T> List<T> readRange(Connection conn, String relation, long fromMillis, long toMillis, RowReader<T> reader)
            throws SQLException {
        String sql =
                "SELECT * FROM " + relation + " WHERE window_start >= ? AND window_start < ? ORDER BY " + keyList();
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

    private void requireKey(WindowKey key) {
        if (key.dimensions().size() != dimensions.size()) {
            throw new IllegalArgumentException(
                    "set " + set.name() + " has dimensions " + dimensions + ", got key " + key.dimensions());
        }
    }

    private void requireValues(MeasureValues values) {
        if (values.size() != measures.size()) {
            throw new IllegalArgumentException(
                    "set " + set.name() + " has " + measures.size() + " measures, got " + values.size() + " values");
        }
    }
}
