package dev.recount.db.tables;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * {@code batch_window_metrics} and its staging table (and every set's own pair). A run loads its rows into
 * {@code batch_window_metrics_staging} (from the driver or from Spark's JDBC writer), then
 * {@link #replaceFromStaging} swaps them in for its scope in one transaction: keys without events vanish,
 * rerunning gives identical rows, a crash before the commit leaves the previous result. A row's {@code run_id} and
 * {@code computed_at} name the run that last inserted or changed its values: a run that computes a row exactly as
 * it stands leaves it alone.
 */
public final class BatchWindowMetricsTable {
    /** The default set's tables; {@link #table()} and {@link #stagingTable()} are this instance's. */
    public static final String TABLE = "batch_window_metrics";

    public static final String STAGING_TABLE = "batch_window_metrics_staging";

    /** Which windows a run replaces: a time range, or an explicit set of window starts (`affected`). */
    public sealed interface Scope permits Range, Windows {}

    public record Range(long fromMillis, long toMillis) implements Scope {
        public Range {
            if (toMillis <= fromMillis)
                throw new IllegalArgumentException("range must not be empty: [" + fromMillis + ", " + toMillis + ")");
        }
    }

    public record Windows(Collection<Long> windowStartsMillis) implements Scope {}

    /**
     * What a replace did to its scope: keys inserted or changed ({@code written}), keys it computed exactly as they
     * stood and left alone ({@code unchanged}), previous keys it removed ({@code deleted}).
     */
    public record ReplaceResult(long written, long unchanged, long deleted) {
        public static final ReplaceResult NOTHING = new ReplaceResult(0, 0, 0);

        public ReplaceResult plus(ReplaceResult o) {
            return new ReplaceResult(written + o.written, unchanged + o.unchanged, deleted + o.deleted);
        }
    }

    private final SetColumns columns;
    private final WindowWritesTable writes;
    private final String table;
    private final String staging;

    public BatchWindowMetricsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.writes = new WindowWritesTable(tables);
        this.table = tables.batchWindowMetrics();
        this.staging = tables.batchWindowMetricsStaging();
    }

    public String table() {
        return table;
    }

    public String stagingTable() {
        return staging;
    }

    /** Column order of the staging table, for Spark's JDBC writer: run_id, the window, dimensions, measures. */
    public String stagingColumns() {
        return "run_id, " + columns.rowList();
    }

    public void insertStaging(Connection conn, long runId, List<WindowRow> rows) throws SQLException {
        int n = 1 + 2 + columns.dimensionCount() + columns.measureCount();
        String sql = "INSERT INTO " + staging + " (" + stagingColumns() + ") VALUES (" + SetColumns.parameters(n) + ")";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            for (WindowRow r : rows) {
                ps.setLong(1, runId);
                columns.bindRow(ps, 2, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /**
     * Replaces every row in {@code scope} with the staged rows of {@code runId} and clears the staging rows.
     * Runs on {@code conn} without committing: the caller commits together with the run's status.
     * Staged rows outside the scope are an error (the run computed more than it may replace). A staged row equal
     * to the stored one (window end and measures) is not written: rewriting a day that did not change took 3.6×
     * the time of leaving it (docs/benchmarks.md §12), and only the windows that did change are logged for the
     * reconciler to read again.
     */
    public ReplaceResult replaceFromStaging(Connection conn, Scope scope, long runId) throws SQLException {
        String inScope = scopePredicate(scope, "s.window_start");
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT count(*) FROM " + staging + " s WHERE s.run_id = ? AND NOT (" + inScope + ")")) {
            ps.setLong(1, runId);
            bindScope(ps, 2, scope, conn);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    throw new IllegalStateException(
                            "run " + runId + " staged " + rs.getLong(1) + " rows outside its scope " + scope);
                }
            }
        }
        // The windows written are logged here, once each (window_writes, V21): the table's trigger skips the rows.
        WindowWritesTable.markLogged(conn);
        long deleted;
        String vanished = "WITH gone AS (DELETE FROM " + table + " t WHERE " + scopePredicate(scope, "t.window_start")
                + " AND NOT EXISTS (SELECT 1 FROM " + staging + " s WHERE s.run_id = ? AND " + columns.sameKey("s", "t")
                + ") RETURNING t.window_start), logged AS ("
                + writes.logWindowsOf(WindowWritesTable.Side.BATCH, "gone") + ") SELECT count(*) FROM gone";
        try (PreparedStatement ps = conn.prepareStatement(vanished)) {
            int next = bindScope(ps, 1, scope, conn);
            ps.setLong(next, runId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                deleted = rs.getLong(1);
            }
        }
        long written;
        String upsert = "WITH up AS (INSERT INTO " + table + " (" + columns.rowList() + ", run_id, computed_at)"
                + " SELECT " + columns.rowList() + ", run_id, now()"
                + " FROM " + staging + " WHERE run_id = ?"
                + " ON CONFLICT (" + columns.keyList() + ") DO UPDATE SET window_end = EXCLUDED.window_end, "
                + columns.measuresFromExcluded() + ", run_id = EXCLUDED.run_id, computed_at = EXCLUDED.computed_at"
                + " WHERE (" + table + ".window_end, " + columns.measureList(table + ".") + ")"
                + " IS DISTINCT FROM (EXCLUDED.window_end, " + columns.measureList("EXCLUDED.") + ")"
                + " RETURNING window_start), logged AS ("
                + writes.logWindowsOf(WindowWritesTable.Side.BATCH, "up") + ") SELECT count(*) FROM up";
        try (PreparedStatement ps = conn.prepareStatement(upsert)) {
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                written = rs.getLong(1);
            }
        }
        long staged = clearStaging(conn, runId);
        return new ReplaceResult(written, staged - written, deleted);
    }

    /** Drops a run's staged rows (after a replace, or to clean up a failed run); returns how many there were. */
    public long clearStaging(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + staging + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            return ps.executeUpdate();
        }
    }

    public List<WindowRow> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(conn, table, fromMillis, toMillis, columns::readRow);
    }

    private static String scopePredicate(Scope scope, String column) {
        return scope instanceof Range ? column + " >= ? AND " + column + " < ?" : column + " = ANY (?)";
    }

    private static int bindScope(PreparedStatement ps, int first, Scope scope, Connection conn) throws SQLException {
        if (scope instanceof Range r) {
            Timestamps.bind(ps, first, r.fromMillis());
            Timestamps.bind(ps, first + 1, r.toMillis());
            return first + 2;
        }
        Windows w = (Windows) scope;
        ps.setArray(first, Timestamps.array(conn, w.windowStartsMillis()));
        return first + 1;
    }
}
