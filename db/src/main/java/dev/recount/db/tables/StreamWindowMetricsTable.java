package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code stream_window_metrics} (and every set's {@code <set>__stream_window_metrics}): the stream job's results, one
 * row per window key of a metric set.
 *
 * <p>The upsert replaces a row only with a later firing of the same window that holds at least as many events:
 * a higher revision AND no fewer events. Within one run of a window events are only ever added, so every real
 * later firing passes; what does not pass is a replayed older firing, a re-commit of the same revision (harmless:
 * nothing changes), and a partial row from a window that was re-opened after its state was gone — the guard keeps
 * the fuller row. {@link #upsert} reports which rows were not applied, so a committer can tell a harmless re-commit
 * from a refused row.
 */
public final class StreamWindowMetricsTable {
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "stream_window_metrics";

    /** A stream result: the window row and the firing that produced it (1 = first firing). */
    public record Row(WindowRow window, int revision) implements java.io.Serializable {
        public Row {
            if (revision < 1) throw new IllegalArgumentException("revision must be >= 1, got " + revision);
        }
    }

    /**
     * Rows per statement over arrays, or per JDBC batch row by row. The driver keeps every bound parameter until the
     * statement runs: one batch of the ~600,000 rows a checkpoint can carry at 100,000 window keys held ~300 MB of
     * encoded parameters.
     */
    static final int BATCH_ROWS = 5_000;

    /** SQLSTATE of one statement writing a key twice ({@code ON CONFLICT DO UPDATE} cannot affect a row twice). */
    private static final String CARDINALITY_VIOLATION = "21000";

    private final SetTables tables;
    private final SetColumns columns;
    private final String table;
    private final String upsert;
    private final String upsertArrays;

    public StreamWindowMetricsTable(SetTables tables) {
        this.tables = tables;
        this.columns = new SetColumns(tables);
        this.table = tables.streamWindowMetrics();
        String insertColumns = "INSERT INTO " + table + " (" + columns.rowList() + ", revision, updated_at)";
        // The guard: a stored row is replaced only by a later firing with at least as many events.
        String guardedUpdate = " ON CONFLICT (" + columns.keyList() + ") DO UPDATE SET"
                + " window_end = EXCLUDED.window_end, " + columns.measuresFromExcluded()
                + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
                + " WHERE " + table + ".revision < EXCLUDED.revision AND " + table + ".events <= EXCLUDED.events";
        int n = 2 + columns.dimensionCount() + columns.measureCount() + 1;
        this.upsert = insertColumns + " VALUES (" + SetColumns.parameters(n) + ", now())" + guardedUpdate;
        StringBuilder arrays = new StringBuilder("?::timestamptz[], ?::timestamptz[]");
        for (int d = 0; d < columns.dimensionCount(); d++) arrays.append(", ?::text[]");
        this.upsertArrays = insertColumns + " SELECT *, now() FROM unnest(" + arrays + ", "
                + columns.measureArrayParameters() + ", ?::int[])" + guardedUpdate;
    }

    public String table() {
        return table;
    }

    /** {@link #upsert}'s single-row statement, bound by {@link #bind}. */
    public String upsertStatement() {
        return upsert;
    }

    public void bind(PreparedStatement ps, Row row) throws SQLException {
        int next = columns.bindRow(ps, 1, row.window());
        ps.setInt(next, row.revision());
    }

    /**
     * Upserts {@code rows} on {@code conn} in chunks of {@value #BATCH_ROWS}; the caller owns the transaction, so all
     * of them still commit together or not at all. Their windows are logged in the set's {@code window_writes} once
     * each, in the same transaction ({@link WindowWritesTable}): the table's trigger then skips the rows.
     *
     * <p>Within a transaction each chunk is one statement (over arrays, behind a savepoint): one round trip and one
     * execution instead of one per row. When it applies fewer rows than it has (a re-commit after a restart) or names
     * a key twice, the chunk goes back to the savepoint and is written row by row in one JDBC batch, whose counts tell
     * which rows were not applied. Outside a transaction every chunk is written row by row.
     *
     * @return the rows the guard did not apply (the stored row is the same or later), in input order
     */
    public List<Row> upsert(Connection conn, List<Row> rows) throws SQLException {
        List<Row> notApplied = new ArrayList<>();
        if (rows.isEmpty()) return notApplied;
        WindowWritesTable writes = new WindowWritesTable(tables);
        WindowWritesTable.markLogged(conn);
        List<Long> windows = new ArrayList<>(rows.size());
        for (Row r : rows) windows.add(r.window().key().windowStartMillis());
        writes.log(conn, WindowWritesTable.Side.STREAM, windows);
        boolean inTransaction = !conn.getAutoCommit();
        try (PreparedStatement arrays = inTransaction ? conn.prepareStatement(upsertArrays) : null;
                PreparedStatement single = conn.prepareStatement(upsert)) {
            for (int from = 0; from < rows.size(); from += BATCH_ROWS) {
                List<Row> chunk = rows.subList(from, Math.min(rows.size(), from + BATCH_ROWS));
                if (inTransaction && allApplied(conn, arrays, chunk)) continue;
                for (Row r : chunk) {
                    bind(single, r);
                    single.addBatch();
                }
                int[] counts = single.executeBatch();
                for (int i = 0; i < counts.length; i++) {
                    if (counts[i] == 0) notApplied.add(chunk.get(i));
                }
            }
        }
        return notApplied;
    }

    /**
     * Writes {@code chunk} in one statement; true when it applied every row. Otherwise nothing of it stays written
     * (back to the savepoint before it), for the caller to write it row by row.
     */
    private boolean allApplied(Connection conn, PreparedStatement ps, List<Row> chunk) throws SQLException {
        int n = chunk.size();
        int dims = columns.dimensionCount();
        int measures = columns.measureCount();
        Object[] starts = new Object[n], ends = new Object[n];
        String[][] dimensionValues = new String[dims][n];
        Object[][] values = new Object[measures][];
        for (int m = 0; m < measures; m++) values[m] = columns.newArray(m, n);
        Integer[] revisions = new Integer[n];
        for (int i = 0; i < n; i++) {
            Row r = chunk.get(i);
            WindowRow w = r.window();
            starts[i] = Timestamps.offsetDateTime(w.key().windowStartMillis());
            ends[i] = Timestamps.offsetDateTime(w.windowEndMillis());
            for (int d = 0; d < dims; d++) dimensionValues[d][i] = w.key().dimension(d);
            for (int m = 0; m < measures; m++) values[m][i] = columns.arrayValue(m, w.values());
            revisions[i] = r.revision();
        }
        int p = 1;
        ps.setArray(p++, conn.createArrayOf("timestamptz", starts));
        ps.setArray(p++, conn.createArrayOf("timestamptz", ends));
        for (int d = 0; d < dims; d++) ps.setArray(p++, conn.createArrayOf("text", dimensionValues[d]));
        for (int m = 0; m < measures; m++) ps.setArray(p++, conn.createArrayOf(columns.arrayType(m), values[m]));
        ps.setArray(p, conn.createArrayOf("integer", revisions));
        Savepoint before = conn.setSavepoint();
        try {
            if (ps.executeUpdate() == n) {
                conn.releaseSavepoint(before);
                return true;
            }
        } catch (SQLException e) {
            if (!CARDINALITY_VIOLATION.equals(e.getSQLState())) throw e;
        }
        conn.rollback(before);
        return false;
    }

    /** The stored rows of {@code keys} (those that exist). */
    public Map<WindowKey, Row> read(Connection conn, Collection<WindowKey> keys) throws SQLException {
        Map<WindowKey, Row> found = new HashMap<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT * FROM " + table + " WHERE " + columns.keyEquals())) {
            for (WindowKey k : keys) {
                columns.bindKeyOnly(ps, 1, k);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) found.put(k, new Row(columns.readRow(rs), rs.getInt("revision")));
                }
            }
        }
        return found;
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(
                conn, table, fromMillis, toMillis, rs -> new Row(columns.readRow(rs), rs.getInt("revision")));
    }
}
