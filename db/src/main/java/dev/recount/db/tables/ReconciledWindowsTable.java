package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code reconciled_windows} (V15): per window, the key count and fingerprint of the stream's, the batch's and the
 * finalized rows as the last applied reconciliation of that window saw and left them, and the run whose diffs for
 * the window are still its diffs. A window whose three sides are unchanged needs no key-by-key reconciliation.
 * {@code fingerprint_version} (V16) names the row hash the fingerprints were computed with: fingerprints of another
 * version cannot be compared, so such a window counts as changed.
 */
public final class ReconciledWindowsTable {
    public static final String TABLE = "reconciled_windows";

    /** One side of a window: how many rows it has and the XOR of their 64-bit hashes (0 without rows). */
    public record Side(long keys, long fingerprint) {
        public static final Side EMPTY = new Side(0, 0);

        public Side {
            if (keys < 0) throw new IllegalArgumentException("keys must be >= 0, got " + keys);
        }
    }

    /**
     * @param fingerprintVersion which row hash the three fingerprints were computed with (1: V15's)
     * @param finalWrites        how many statements had written window_corrections ({@link
     *                           WindowCorrectionsWritesTable#count}) when {@code finalized} was recorded; null: not
     *                           recorded (before V17)
     */
    public record Row(
            long windowStartMillis,
            Side stream,
            Side batch,
            Side finalized,
            long reconciliationRunId,
            int fingerprintVersion,
            Long finalWrites) {
        public Row {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(batch, "batch");
            Objects.requireNonNull(finalized, "finalized");
            if (fingerprintVersion < 1)
                throw new IllegalArgumentException("fingerprintVersion must be >= 1, got " + fingerprintVersion);
        }
    }

    private static final String UPSERT = "INSERT INTO " + TABLE + " (window_start, stream_keys, stream_fingerprint,"
            + " batch_keys, batch_fingerprint, final_keys, final_fingerprint, reconciliation_run_id, fingerprint_version, final_writes)"
            + " SELECT * FROM unnest(?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],"
            + " ?::bigint[], ?::bigint[], ?::smallint[], ?::bigint[])"
            + " ON CONFLICT (window_start) DO UPDATE SET stream_keys = EXCLUDED.stream_keys,"
            + " stream_fingerprint = EXCLUDED.stream_fingerprint, batch_keys = EXCLUDED.batch_keys,"
            + " batch_fingerprint = EXCLUDED.batch_fingerprint, final_keys = EXCLUDED.final_keys,"
            + " final_fingerprint = EXCLUDED.final_fingerprint, reconciliation_run_id = EXCLUDED.reconciliation_run_id,"
            + " fingerprint_version = EXCLUDED.fingerprint_version, final_writes = EXCLUDED.final_writes,"
            + " reconciled_at = now()";

    private ReconciledWindowsTable() {}

    /** The recorded windows starting in {@code [fromMillis, toMillis)}, by window start. */
    public static Map<Long, Row> read(Connection conn, long fromMillis, long toMillis) throws SQLException {
        Map<Long, Row> rows = new HashMap<>();
        try (PreparedStatement ps =
                conn.prepareStatement("SELECT * FROM " + TABLE + " WHERE window_start >= ? AND window_start < ?")) {
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
                                    rs.getObject("final_writes", Long.class)));
                }
            }
        }
        return rows;
    }

    /** Records {@code rows} (one statement, whatever their number), replacing what those windows had. */
    public static void upsert(Connection conn, List<Row> rows) throws SQLException {
        if (rows.isEmpty()) return;
        int n = rows.size();
        Object[] windows = new Object[n];
        Long[][] columns = new Long[8][n];
        Short[] versions = new Short[n];
        for (int i = 0; i < n; i++) {
            Row r = rows.get(i);
            windows[i] = OffsetDateTime.ofInstant(Instant.ofEpochMilli(r.windowStartMillis()), ZoneOffset.UTC);
            columns[0][i] = r.stream().keys();
            columns[1][i] = r.stream().fingerprint();
            columns[2][i] = r.batch().keys();
            columns[3][i] = r.batch().fingerprint();
            columns[4][i] = r.finalized().keys();
            columns[5][i] = r.finalized().fingerprint();
            columns[6][i] = r.reconciliationRunId();
            columns[7][i] = r.finalWrites();
            versions[i] = (short) r.fingerprintVersion();
        }
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            ps.setArray(1, conn.createArrayOf("timestamptz", windows));
            for (int c = 0; c < 7; c++) ps.setArray(c + 2, conn.createArrayOf("bigint", columns[c]));
            ps.setArray(9, conn.createArrayOf("smallint", versions));
            ps.setArray(10, conn.createArrayOf("bigint", columns[7]));
            ps.executeUpdate();
        }
    }
}
