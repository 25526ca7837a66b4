package dev.recount.db.tables;

import java.io.Serializable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code stream_attribution_metrics}: the stream job's attribution results, one row per window key (window of the
 * click).
 *
 * <p>The upsert's guard, like {@link StreamWindowMetricsTable}'s: a row is replaced only by a higher revision that
 * holds no fewer clicks (attributed + unattributed) and no fewer attributed conversions. Within one run of a window
 * clicks are only added or moved from unattributed to attributed, so every real later firing passes; a replayed
 * older firing or a re-commit changes nothing. {@link #upsert} returns the rows not applied.
 */
public final class StreamAttributionMetricsTable {
    public static final String TABLE = "stream_attribution_metrics";

    public static final String UPSERT = "INSERT INTO " + TABLE
            + " (window_start, window_end, campaign_id, channel_id, " + AttributionRow.METRIC_LIST
            + ", revision, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())"
            + " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end, "
            + AttributionRow.SET_FROM_EXCLUDED + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
            + " WHERE " + TABLE + ".revision < EXCLUDED.revision"
            + " AND " + TABLE + ".attributed_clicks + " + TABLE + ".unattributed_clicks"
            + " <= EXCLUDED.attributed_clicks + EXCLUDED.unattributed_clicks"
            + " AND " + TABLE + ".attributed_conversions <= EXCLUDED.attributed_conversions";

    /** A stream result: the attribution row and the firing that produced it (1 = first firing). */
    public record Row(AttributionRow attribution, int revision) implements Serializable {
        public Row {
            if (revision < 1) throw new IllegalArgumentException("revision must be >= 1, got " + revision);
        }
    }

    private StreamAttributionMetricsTable() {}

    /** Upserts {@code rows} on {@code conn} in one JDBC batch; the caller owns the transaction. Returns those not applied. */
    public static List<Row> upsert(Connection conn, List<Row> rows) throws SQLException {
        List<Row> notApplied = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            for (int from = 0; from < rows.size(); from += StreamWindowMetricsTable.BATCH_ROWS) {
                int to = Math.min(rows.size(), from + StreamWindowMetricsTable.BATCH_ROWS);
                for (Row r : rows.subList(from, to)) {
                    int next = r.attribution().bind(ps, 1);
                    ps.setInt(next, r.revision());
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

    /** Rows whose window starts in {@code [fromMillis, toMillis)}, ordered by key. */
    public static List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return WindowColumns.readRange(
                conn, TABLE, fromMillis, toMillis, rs -> new Row(AttributionRow.read(rs), rs.getInt("revision")));
    }
}
