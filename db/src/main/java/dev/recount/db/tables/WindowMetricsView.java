package dev.recount.db.tables;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code window_metrics} (and every set's {@code <set>__window_metrics}): the serving view (CONTRACT §4) that dashboards and finance read. Read-only: it is
 * changed through {@link StreamWindowMetricsTable}, {@link BatchWindowMetricsTable} and
 * {@link WindowCorrectionsTable}.
 */
public final class WindowMetricsView {
    /** The default set's view; {@link #view()} is this instance's. */
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

    private final SetColumns columns;
    private final String view;

    public WindowMetricsView(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.view = tables.windowMetrics();
    }

    public String view() {
        return view;
    }

    public Optional<Row> find(Connection conn, WindowKey key) throws SQLException {
        String sql = "SELECT * FROM " + view + " WHERE " + columns.keyEquals();
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            columns.bindKeyOnly(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return Optional.empty();
                Row row = read(rs);
                if (rs.next()) throw new IllegalStateException(view + " serves key " + key + " twice");
                return Optional.of(row);
            }
        }
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(conn, view, fromMillis, toMillis, this::read);
    }

    /** The summed measures served for windows starting in {@code [fromMillis, toMillis)}. */
    public MeasureValues totals(Connection conn, long fromMillis, long toMillis) throws SQLException {
        List<String> sums = new ArrayList<>();
        for (Measure m : columns.set().measures()) {
            // numeric for sums: many numeric(38,0) values may add up past 38 digits
            sums.add("coalesce(sum(" + m.name() + "), 0)::" + (m.isCount() ? "bigint" : "numeric") + " AS " + m.name());
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT " + String.join(", ", sums) + " FROM " + view
                + " WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return columns.readValues(rs, "");
            }
        }
    }

    private Row read(ResultSet rs) throws SQLException {
        return new Row(
                columns.readRow(rs),
                Source.valueOf(rs.getString("source").toUpperCase(Locale.ROOT)),
                rs.getBoolean("is_final"));
    }
}
