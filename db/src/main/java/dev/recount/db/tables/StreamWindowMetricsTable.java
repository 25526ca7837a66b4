package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

    public static final String UPSERT = "INSERT INTO " + TABLE
            + " (window_start, window_end, campaign_id, channel_id, " + MetricColumns.LIST + ", revision, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now())"
            + " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end, "
            + MetricColumns.SET_FROM_EXCLUDED + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
            + " WHERE " + TABLE + ".revision < EXCLUDED.revision AND " + TABLE + ".events <= EXCLUDED.events";

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
     * Rows per JDBC batch. The driver keeps every bound parameter of a batch until it is executed: one batch of
     * the ~600,000 rows a checkpoint can carry at 100,000 window keys held ~300 MB of encoded parameters.
     */
    static final int BATCH_ROWS = 5_000;

    /**
     * Upserts {@code rows} on {@code conn} in JDBC batches of {@value #BATCH_ROWS}; the caller owns the transaction,
     * so all of them still commit together or not at all. Their windows are logged in {@code window_writes} once
     * each, in the same transaction ({@link WindowWritesTable}): the table's trigger then skips the rows.
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
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            for (int from = 0; from < rows.size(); from += BATCH_ROWS) {
                int to = Math.min(rows.size(), from + BATCH_ROWS);
                for (Row r : rows.subList(from, to)) {
                    bind(ps, r);
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                for (int i = 0; i < counts.length; i++) {
                    if (counts[i] == 0) notApplied.add(rows.get(from + i));
                }
            }
        }
        return notApplied;
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
