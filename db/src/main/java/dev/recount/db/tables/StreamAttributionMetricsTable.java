package dev.recount.db.tables;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.sets.SetTables;
import java.io.Serializable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code stream_attribution_metrics} (and every set's with attribution): the stream job's attribution results, one row per window key (window of the
 * click).
 *
 * <p>The upsert's guard, like {@link StreamWindowMetricsTable}'s: a row is replaced only by a higher revision that
 * holds no fewer clicks (attributed + unattributed) and no fewer attributed conversions. Within one run of a window
 * clicks are only added or moved from unattributed to attributed, so every real later firing passes; a replayed
 * older firing or a re-commit changes nothing. {@link #upsert} returns the rows not applied.
 */
public final class StreamAttributionMetricsTable {
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "stream_attribution_metrics";

    /** A stream result: the attribution row and the firing that produced it (1 = first firing). */
    public record Row(AttributionRow attribution, int revision) implements Serializable {
        public Row {
            if (revision < 1) throw new IllegalArgumentException("revision must be >= 1, got " + revision);
        }
    }

    private final SetColumns columns;
    private final String table;
    private final String upsert;

    public StreamAttributionMetricsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.streamAttributionMetrics();
        int n = 2 + columns.dimensionCount() + AttributionMetrics.COLUMNS.length + 1;
        this.upsert = "INSERT INTO " + table + " (" + columns.windowList() + ", " + AttributionRow.METRIC_LIST
                + ", revision, updated_at) VALUES (" + SetColumns.parameters(n) + ", now())"
                + " ON CONFLICT (" + columns.keyList() + ") DO UPDATE SET window_end = EXCLUDED.window_end, "
                + AttributionRow.SET_FROM_EXCLUDED + ", revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at"
                + " WHERE " + table + ".revision < EXCLUDED.revision"
                + " AND " + table + ".attributed_clicks + " + table + ".unattributed_clicks"
                + " <= EXCLUDED.attributed_clicks + EXCLUDED.unattributed_clicks"
                + " AND " + table + ".attributed_conversions <= EXCLUDED.attributed_conversions";
    }

    public String table() {
        return table;
    }

    /** Upserts {@code rows} on {@code conn} in one JDBC batch; the caller owns the transaction. Returns those not applied. */
    public List<Row> upsert(Connection conn, List<Row> rows) throws SQLException {
        List<Row> notApplied = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement(upsert)) {
            for (int from = 0; from < rows.size(); from += StreamWindowMetricsTable.BATCH_ROWS) {
                int to = Math.min(rows.size(), from + StreamWindowMetricsTable.BATCH_ROWS);
                for (Row r : rows.subList(from, to)) {
                    int next = r.attribution().bind(ps, 1, columns);
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
    public List<Row> readRange(Connection conn, long fromMillis, long toMillis) throws SQLException {
        return columns.readRange(
                conn,
                table,
                fromMillis,
                toMillis,
                rs -> new Row(AttributionRow.read(rs, columns), rs.getInt("revision")));
    }
}
