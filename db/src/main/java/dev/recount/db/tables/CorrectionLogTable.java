package dev.recount.db.tables;

import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * {@code correction_log} (every set has its own): append-only (a trigger refuses UPDATE, DELETE and TRUNCATE, and no role is granted
 * them), one row per metric value a reconciliation changed in {@code window_metrics}. There is deliberately no
 * upsert: an entry records that something happened, so writing it twice would be a second event. The
 * reconciler only appends changes it is about to make, which is what keeps a rerun from appending anything.
 */
public final class CorrectionLogTable {
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "correction_log";

    /** Why a value changed. */
    public enum Reason {
        /** Stream and batch both had the key with different values; the batch value replaced the stream's. */
        STREAM_MISMATCH,
        /** Only the batch had the key: it appears (before is NULL). */
        MISSING_IN_STREAM,
        /** Only the stream had the key: it is hidden (after is NULL). */
        MISSING_IN_BATCH,
        /** The key was finalized before and a later batch result differs from that finalized value. */
        BATCH_CHANGED;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Reason of(String wire) {
            return valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    /**
     * One changed value of measure {@code metric} (its column name); {@code before}/{@code after} null means the key
     * was not served before/after. Values are exact integers ({@code numeric(38,0)} columns), whatever the measure: a
     * sum may exceed a long.
     */
    public record Entry(
            long reconciliationRunId,
            WindowKey key,
            String metric,
            BigInteger before,
            BigInteger after,
            Reason reason) {
        public Entry {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(metric, "metric");
            Objects.requireNonNull(reason, "reason");
            if (Objects.equals(before, after))
                throw new IllegalArgumentException("an entry must record a change, got " + before + " -> " + after);
        }
    }

    private final SetColumns columns;
    private final String table;

    public CorrectionLogTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.correctionLog();
    }

    public String table() {
        return table;
    }

    /** Column list for inserts, in the order {@link #bind} uses ({@code log_id} and {@code logged_at} default). */
    public String insertColumns() {
        return "reconciliation_run_id, " + columns.keyList() + ", metric, before_value, after_value, reason";
    }

    public void bind(PreparedStatement ps, Entry e) throws SQLException {
        ps.setLong(1, e.reconciliationRunId());
        int i = columns.bindKeyOnly(ps, 2, e.key());
        ps.setString(i++, e.metric());
        bindValue(ps, i++, e.before());
        bindValue(ps, i++, e.after());
        ps.setString(i, e.reason().wireName());
    }

    public void append(Connection conn, List<Entry> entries) throws SQLException {
        int n = 1 + 1 + columns.dimensionCount() + 4;
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO " + table + " (" + insertColumns() + ") VALUES (" + SetColumns.parameters(n) + ")")) {
            for (Entry e : entries) {
                bind(ps, e);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** The measures' entries of a run in log order (attribution entries, under their own metric names, are not). */
    public List<Entry> readRun(Connection conn, long runId) throws SQLException {
        return readWhere(conn, "reconciliation_run_id = ?", ps -> ps.setLong(1, runId));
    }

    /** Every entry ever logged for {@code key}, oldest first: the key's audit trail. */
    public List<Entry> readKey(Connection conn, WindowKey key) throws SQLException {
        return readWhere(conn, columns.keyEquals(), ps -> columns.bindKeyOnly(ps, 1, key));
    }

    /** How many values a run changed, per reason (reasons without entries are absent). */
    public Map<Reason, Long> countByReason(Connection conn, long runId) throws SQLException {
        String sql = "SELECT reason, count(*) AS n FROM " + table + " WHERE reconciliation_run_id = ? GROUP BY reason";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setLong(1, runId);
            Map<Reason, Long> counts = new EnumMap<>(Reason.class);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) counts.put(Reason.of(rs.getString("reason")), rs.getLong("n"));
            }
            return counts;
        }
    }

    private static void bindValue(PreparedStatement ps, int index, BigInteger value) throws SQLException {
        if (value == null) ps.setNull(index, Types.NUMERIC);
        else ps.setBigDecimal(index, new BigDecimal(value));
    }

    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private List<Entry> readWhere(Connection conn, String where, Binder binder) throws SQLException {
        // The measures' entries: attribution corrections share the log under their own metric names.
        String measures = String.join(
                ", ",
                columns.set().measureNames().stream().map(m -> "'" + m + "'").toList());
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT * FROM " + table + " WHERE (" + where + ") AND metric IN (" + measures + ") ORDER BY log_id")) {
            binder.bind(ps);
            List<Entry> entries = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    entries.add(new Entry(
                            rs.getLong("reconciliation_run_id"),
                            columns.readKey(rs),
                            rs.getString("metric"),
                            SetColumns.exact(rs, "before_value"),
                            SetColumns.exact(rs, "after_value"),
                            Reason.of(rs.getString("reason"))));
                }
            }
            return entries;
        }
    }
}
