package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@code stream_window_metrics}: the stream job's results, one row per window key.
 *
 * <p>The upsert replaces a row only with a later firing of the same window that holds at least as many events:
 * a higher revision AND no fewer events. Within one run of a window events are only ever added, so every real
 * later firing passes; what does not pass is a replayed older firing, a re-commit of the same revision (harmless:
 * nothing changes), and a partial row from a window that was re-opened after its state was gone — the guard keeps
 * the fuller row. {@link #upsert} reports which rows were not applied, so a committer can tell a harmless re-commit
 * from a refused row.
 */
public final class StreamWindowMetricsTable {
    public static final String TABLE = "stream_window_metrics";

    private static final String INSERT_COLUMNS = "INSERT INTO " + TABLE
            + " (window_start, window_end, campaign_id, channel_id, " + MetricColumns.LIST + ", revision, updated_at)";

    /** The guard: a stored row is replaced only by a later firing with at least as many events. */
    private static final String GUARDED_UPDATE = " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET"
            + " window_end = EXCLUDED.window_end, " + MetricColumns.SET_FROM_EXCLUDED
            + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
            + " WHERE " + TABLE + ".revision < EXCLUDED.revision AND " + TABLE + ".events <= EXCLUDED.events";

    public static final String UPSERT =
            INSERT_COLUMNS + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now())" + GUARDED_UPDATE;

    /** A stream result: the window row and the firing that produced it (1 = first firing). */
    public record Row(WindowRow window, int revision) implements java.io.Serializable {
        public Row {
            if (revision < 1) throw new IllegalArgumentException("revision must be >= 1, got " + revision);
        }
    }

    private StreamWindowMetricsTable() {}

    public static void bind(PreparedStatement ps, Row row) throws SQLException {
        int next = WindowColumns.bindRow(ps, 1, row.window());
        ps.setInt(next, row.revision());
    }

    /**
     * Rows per statement over arrays, or per JDBC batch row by row. The driver keeps every bound parameter until the
     * statement runs: one batch of the ~600,000 rows a checkpoint can carry at 100,000 window keys held ~300 MB of
     * encoded parameters.
     */
    static final int BATCH_ROWS = 5_000;

    /**
     * {@link #UPSERT} for many rows in one statement: the rows as one array per column. The same guard; it reports
     * only how many rows it applied, so a chunk with a row it did not apply is written again with {@link #UPSERT}
     * row by row, which tells which.
     */
    static final String UPSERT_ARRAYS = INSERT_COLUMNS
            + " SELECT *, now() FROM unnest(?::timestamptz[], ?::timestamptz[], ?::text[], ?::text[], "
            + Arrays.stream(Metric.values())
                    .map(m -> "?::" + MetricColumns.arrayType(m) + "[]")
                    .collect(Collectors.joining(", "))
            + ", ?::int[])" + GUARDED_UPDATE;

    /** SQLSTATE of one statement writing a key twice ({@code ON CONFLICT DO UPDATE} cannot affect a row twice). */
    private static final String CARDINALITY_VIOLATION = "21000";

    /**
     * Upserts {@code rows} on {@code conn} in chunks of {@value #BATCH_ROWS}; the caller owns the transaction, so all
     * of them still commit together or not at all. Their windows are logged in {@code window_writes} once each, in
     * the same transaction ({@link WindowWritesTable}): the table's trigger then skips the rows.
     *
     * <p>Within a transaction each chunk is one statement ({@link #UPSERT_ARRAYS}, behind a savepoint): one
     * round trip and one execution instead of one per row. When it applies fewer rows than it has (a re-commit after
     * a restart) or names a key twice, the chunk goes back to the savepoint and is written row by row in one JDBC
     * batch ({@link #UPSERT}), whose counts tell which rows were not applied. Outside a transaction every chunk is
     * written row by row.
     *
     * @return the rows the guard did not apply (the stored row is the same or later), in input order
     */
    public static List<Row> upsert(Connection conn, List<Row> rows) throws SQLException {
        List<Row> notApplied = new ArrayList<>();
        if (rows.isEmpty()) return notApplied;
        WindowWritesTable.markLogged(conn);
        List<Long> windows = new ArrayList<>(rows.size());
        for (Row r : rows) windows.add(r.window().key().windowStartMillis());
        WindowWritesTable.log(conn, WindowWritesTable.Side.STREAM, windows);
        boolean inTransaction = !conn.getAutoCommit();
        try (PreparedStatement arrays = inTransaction ? conn.prepareStatement(UPSERT_ARRAYS) : null;
                PreparedStatement single = conn.prepareStatement(UPSERT)) {
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
    private static boolean allApplied(Connection conn, PreparedStatement ps, List<Row> chunk) throws SQLException {
        int n = chunk.size();
        Object[] starts = new Object[n], ends = new Object[n];
        String[] campaigns = new String[n], channels = new String[n];
        Metric[] metrics = Metric.values();
        Object[][] values = new Object[metrics.length][];
        for (int m = 0; m < metrics.length; m++) values[m] = MetricColumns.newArray(metrics[m], n);
        Integer[] revisions = new Integer[n];
        for (int i = 0; i < n; i++) {
            Row r = chunk.get(i);
            WindowRow w = r.window();
            starts[i] = Timestamps.offsetDateTime(w.key().windowStartMillis());
            ends[i] = Timestamps.offsetDateTime(w.windowEndMillis());
            campaigns[i] = w.key().campaignId();
            channels[i] = w.key().channelId();
            for (int m = 0; m < metrics.length; m++) {
                values[m][i] = MetricColumns.arrayValue(metrics[m], w.metrics());
            }
            revisions[i] = r.revision();
        }
        ps.setArray(1, conn.createArrayOf("timestamptz", starts));
        ps.setArray(2, conn.createArrayOf("timestamptz", ends));
        ps.setArray(3, conn.createArrayOf("text", campaigns));
        ps.setArray(4, conn.createArrayOf("text", channels));
        for (int m = 0; m < metrics.length; m++) {
            ps.setArray(5 + m, conn.createArrayOf(MetricColumns.arrayType(metrics[m]), values[m]));
        }
        ps.setArray(5 + metrics.length, conn.createArrayOf("integer", revisions));
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
    public static Map<WindowKey, Row> read(Connection conn, Collection<WindowKey> keys) throws SQLException {
        Map<WindowKey, Row> found = new HashMap<>();
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT * FROM " + TABLE + " WHERE window_start = ? AND campaign_id = ? AND channel_id = ?")) {
            for (WindowKey k : keys) {
                Timestamps.bind(ps, 1, k.windowStartMillis());
                ps.setString(2, k.campaignId());
                ps.setString(3, k.channelId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) found.put(k, new Row(WindowColumns.readRow(rs), rs.getInt("revision")));
                }
            }
        }
        return found;
    }

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(
                conn, TABLE, fromMillis, toMillis, rs -> new Row(WindowColumns.readRow(rs), rs.getInt("revision")));
    }
}
