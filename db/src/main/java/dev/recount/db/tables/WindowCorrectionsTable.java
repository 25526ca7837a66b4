package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
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
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "window_corrections";

    /** A finalized key: the batch row's values, or (with {@code removed}) a key to hide, measures zero. */
    public record Row(WindowRow window, boolean removed, long reconciliationRunId, Long batchRunId) {
        public Row {
            Objects.requireNonNull(window, "window");
        }
    }

    private final SetColumns columns;
    private final String table;

    public WindowCorrectionsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.windowCorrections();
    }

    public String table() {
        return table;
    }

    /** Column list for inserts, in the order {@link #bind} uses. */
    public String insertColumns() {
        return columns.rowList() + ", removed, reconciliation_run_id, batch_run_id";
    }

    /** Appended to an {@code INSERT INTO <table> (insertColumns()) ...}: the change-only upsert. */
    public String onConflictUpdateIfChanged() {
        return " ON CONFLICT (" + columns.keyList() + ") DO UPDATE SET window_end = EXCLUDED.window_end, "
                + columns.measuresFromExcluded() + ", removed = EXCLUDED.removed,"
                + " reconciliation_run_id = EXCLUDED.reconciliation_run_id, batch_run_id = EXCLUDED.batch_run_id,"
                + " finalized_at = now()"
                + " WHERE (" + table + ".window_end, " + columns.measureList(table + ".") + ", " + table + ".removed)"
                + " IS DISTINCT FROM (EXCLUDED.window_end, " + columns.measureList("EXCLUDED.") + ", EXCLUDED.removed)";
    }

    public void bind(PreparedStatement ps, Row r) throws SQLException {
        int next = columns.bindRow(ps, 1, r.window());
        ps.setBoolean(next, r.removed());
        ps.setLong(next + 1, r.reconciliationRunId());
        if (r.batchRunId() == null) ps.setNull(next + 2, Types.BIGINT);
        else ps.setLong(next + 2, r.batchRunId());
    }

    /** Row-wise change-only upsert; returns how many rows were inserted or changed. */
    public int upsert(Connection conn, List<Row> rows) throws SQLException {
        int n = 2 + columns.dimensionCount() + columns.measureCount() + 3;
        String upsert = "INSERT INTO " + table + " (" + insertColumns() + ") VALUES (" + SetColumns.parameters(n) + ")"
                + onConflictUpdateIfChanged();
        int changed = 0;
        try (PreparedStatement ps = conn.prepareStatement(upsert)) {
            for (Row r : rows) {
                bind(ps, r);
                ps.addBatch();
            }
            for (int c : ps.executeBatch()) changed += Math.max(c, 0);
        }
        return changed;
    }

    public Optional<Row> find(Connection conn, WindowKey key) throws SQLException {
        String sql = "SELECT * FROM " + table + " WHERE " + columns.keyEquals();
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            columns.bindKeyOnly(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(conn, table, fromMillis, toMillis, this::read);
    }

    private Row read(ResultSet rs) throws SQLException {
        return new Row(columns.readRow(rs), rs.getBoolean("removed"), rs.getLong("reconciliation_run_id"), (Long)
                rs.getObject("batch_run_id"));
    }
}
