package dev.recount.db.tables;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code reconciled_windows} (V15; every set has its own): per window, the key count and fingerprint of the stream's, the batch's and the
 * finalized rows as the last applied reconciliation of that window saw and left them, and the run whose diffs for
 * the window are still its diffs. A window whose three sides are unchanged needs no key-by-key reconciliation.
 * {@code fingerprint_version} (V16) names the row hash the fingerprints were computed with: fingerprints of another
 * version cannot be compared, so such a window counts as changed. {@code survey} (V21) holds the rest of what the
 * run read of the window, so that a rerun whose windows nothing wrote since ({@link WindowWritesTable}) can take them
 * as recorded without reading them.
 */
public final class ReconciledWindowsTable {

    /** One side of a window: how many rows it has and the XOR of their 64-bit hashes (0 without rows). */
    public record Side(long keys, long fingerprint) {
        public static final Side EMPTY = new Side(0, 0);

        public Side {
            if (keys < 0) throw new IllegalArgumentException("keys must be >= 0, got " + keys);
        }
    }

    /**
     * What else a run read of a window besides the fingerprints: the first and last window end of the stream's and
     * of the batch's rows (0 and 0 for a side without rows), and the batch's summed measures.
     */
    public record Survey(
            long streamMinEndMillis,
            long streamMaxEndMillis,
            long batchMinEndMillis,
            long batchMaxEndMillis,
            MeasureValues batchSums) {
        public Survey {
            Objects.requireNonNull(batchSums, "batchSums");
        }
    }

    /**
     * @param fingerprintVersion which row hash the three fingerprints were computed with (1: V15's)
     * @param finalWrites        how many statements had written window_corrections ({@link
     *                           WindowCorrectionsWritesTable#count}) when {@code finalized} was recorded; null: not
     *                           recorded (before V17)
     * @param survey             the rest of what the run read of the window; null: not recorded (before V21)
     */
    public record Row(
            long windowStartMillis,
            Side stream,
            Side batch,
            Side finalized,
            long reconciliationRunId,
            int fingerprintVersion,
            Long finalWrites,
            Survey survey) {
        public Row {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(batch, "batch");
            Objects.requireNonNull(finalized, "finalized");
            if (fingerprintVersion < 1)
                throw new IllegalArgumentException("fingerprintVersion must be >= 1, got " + fingerprintVersion);
        }
    }

    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "reconciled_windows";

    private final SetColumns columns;
    private final String table;
    private final String upsert;

    public ReconciledWindowsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.reconciledWindows();
        // The batch's summed measures (V21): "batch_impressions, batch_clicks, ..."
        List<String> batchSet = new ArrayList<>();
        for (String m : tables.set().measureNames()) batchSet.add("batch_" + m + " = EXCLUDED.batch_" + m);
        this.upsert = "INSERT INTO " + table + " (window_start, stream_keys, stream_fingerprint,"
                + " batch_keys, batch_fingerprint, final_keys, final_fingerprint, reconciliation_run_id,"
                + " fingerprint_version, final_writes, stream_min_window_end, stream_max_window_end,"
                + " batch_min_window_end, batch_max_window_end, " + columns.measureList("batch_") + ")"
                + " SELECT * FROM unnest(?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],"
                + " ?::bigint[], ?::bigint[], ?::bigint[], ?::smallint[], ?::bigint[], ?::timestamptz[],"
                + " ?::timestamptz[], ?::timestamptz[], ?::timestamptz[], " + columns.measureArrayParameters()
                + ") ON CONFLICT (window_start) DO UPDATE SET stream_keys = EXCLUDED.stream_keys,"
                + " stream_fingerprint = EXCLUDED.stream_fingerprint, batch_keys = EXCLUDED.batch_keys,"
                + " batch_fingerprint = EXCLUDED.batch_fingerprint, final_keys = EXCLUDED.final_keys,"
                + " final_fingerprint = EXCLUDED.final_fingerprint,"
                + " reconciliation_run_id = EXCLUDED.reconciliation_run_id,"
                + " fingerprint_version = EXCLUDED.fingerprint_version, final_writes = EXCLUDED.final_writes,"
                + " stream_min_window_end = EXCLUDED.stream_min_window_end,"
                + " stream_max_window_end = EXCLUDED.stream_max_window_end,"
                + " batch_min_window_end = EXCLUDED.batch_min_window_end,"
                + " batch_max_window_end = EXCLUDED.batch_max_window_end, " + String.join(", ", batchSet)
                + ", reconciled_at = now()";
    }

    public String table() {
        return table;
    }

    /** The recorded windows starting in {@code [fromMillis, toMillis)}, by window start. */
    public Map<Long, Row> read(Connection conn, long fromMillis, long toMillis) throws SQLException {
        Map<Long, Row> rows = new HashMap<>();
        try (PreparedStatement ps =
                conn.prepareStatement("SELECT * FROM " + table + " WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long w = Timestamps.read(rs, "window_start");
                    rows.put(
                            w,
                            new Row(
                                    w,
                                    new Side(rs.getLong("stream_keys"), rs.getLong("stream_fingerprint")),
                                    new Side(rs.getLong("batch_keys"), rs.getLong("batch_fingerprint")),
                                    new Side(rs.getLong("final_keys"), rs.getLong("final_fingerprint")),
                                    rs.getLong("reconciliation_run_id"),
                                    rs.getInt("fingerprint_version"),
                                    rs.getObject("final_writes", Long.class),
                                    readSurvey(rs)));
                }
            }
        }
        return rows;
    }

    private Survey readSurvey(ResultSet rs) throws SQLException {
        if (rs.getObject("batch_events") == null) return null; // every set has events
        return new Survey(
                endMillis(rs, "stream_min_window_end"),
                endMillis(rs, "stream_max_window_end"),
                endMillis(rs, "batch_min_window_end"),
                endMillis(rs, "batch_max_window_end"),
                columns.readValues(rs, "batch_"));
    }

    /** A side without rows has no window ends: recorded as NULL, read as 0 (the survey's value for none). */
    private static long endMillis(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column) == null ? 0 : Timestamps.read(rs, column);
    }

    private static OffsetDateTime endOrNull(long millis) {
        return millis == 0 ? null : Timestamps.offsetDateTime(millis);
    }

    /** Records {@code rows} (one statement, whatever their number), replacing what those windows had. */
    public void upsert(Connection conn, List<Row> rows) throws SQLException {
        if (rows.isEmpty()) return;
        int n = rows.size();
        Object[] windows = new Object[n];
        Long[][] cells = new Long[8][n];
        Short[] versions = new Short[n];
        Object[][] ends = new Object[4][n];
        int measures = columns.measureCount();
        Object[][] sums = new Object[measures][];
        for (int m = 0; m < measures; m++) sums[m] = columns.newArray(m, n);
        for (int i = 0; i < n; i++) {
            Row r = rows.get(i);
            windows[i] = Timestamps.offsetDateTime(r.windowStartMillis());
            cells[0][i] = r.stream().keys();
            cells[1][i] = r.stream().fingerprint();
            cells[2][i] = r.batch().keys();
            cells[3][i] = r.batch().fingerprint();
            cells[4][i] = r.finalized().keys();
            cells[5][i] = r.finalized().fingerprint();
            cells[6][i] = r.reconciliationRunId();
            cells[7][i] = r.finalWrites();
            versions[i] = (short) r.fingerprintVersion();
            Survey v = r.survey();
            if (v == null) continue;
            ends[0][i] = endOrNull(v.streamMinEndMillis());
            ends[1][i] = endOrNull(v.streamMaxEndMillis());
            ends[2][i] = endOrNull(v.batchMinEndMillis());
            ends[3][i] = endOrNull(v.batchMaxEndMillis());
            for (int m = 0; m < measures; m++) sums[m][i] = columns.arrayValue(m, v.batchSums());
        }
        try (PreparedStatement ps = conn.prepareStatement(upsert)) {
            ps.setArray(1, conn.createArrayOf("timestamptz", windows));
            for (int c = 0; c < 7; c++) ps.setArray(c + 2, conn.createArrayOf("bigint", cells[c]));
            ps.setArray(9, conn.createArrayOf("smallint", versions));
            ps.setArray(10, conn.createArrayOf("bigint", cells[7]));
            for (int e = 0; e < 4; e++) ps.setArray(11 + e, conn.createArrayOf("timestamptz", ends[e]));
            for (int m = 0; m < measures; m++) ps.setArray(15 + m, conn.createArrayOf(columns.arrayType(m), sums[m]));
            ps.executeUpdate();
        }
    }
}
