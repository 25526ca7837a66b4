package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.window.WindowKey;
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
 * {@code correction_log}: append-only (a trigger refuses UPDATE, DELETE and TRUNCATE, and no role is granted
 * them), one row per metric value a reconciliation changed in {@code window_metrics}. There is deliberately no
 * upsert: an entry records that something happened, so writing it twice would be a second event. The
 * reconciler only appends changes it is about to make, which is what keeps a rerun from appending anything.
 */
public final class CorrectionLogTable {
    public static final String TABLE = "correction_log";

    /** Column list for inserts, in the order {@link #bind} uses ({@code log_id} and {@code logged_at} default). */
    public static final String INSERT_COLUMNS =
            "reconciliation_run_id, window_start, campaign_id, channel_id, metric, before_value, after_value, reason";

    static final String APPEND = "INSERT INTO " + TABLE + " (" + INSERT_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

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
     * One changed value; {@code before}/{@code after} null means the key was not served before/after. Values are
     * exact integers ({@code numeric(38,0)} columns), whatever the metric: spend may exceed a long.
     */
    public record Entry(
            long reconciliationRunId,
            WindowKey key,
            Metric metric,
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

    private CorrectionLogTable() {}

    public static void bind(PreparedStatement ps, Entry e) throws SQLException {
        ps.setLong(1, e.reconciliationRunId());
        Timestamps.bind(ps, 2, e.key().windowStartMillis());
        ps.setString(3, e.key().campaignId());
        ps.setString(4, e.key().channelId());
        ps.setString(5, e.metric().column());
        bindValue(ps, 6, e.before());
        bindValue(ps, 7, e.after());
        ps.setString(8, e.reason().wireName());
    }

    public static void append(Connection conn, List<Entry> entries) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(APPEND)) {
            for (Entry e : entries) {
                bind(ps, e);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** A run's entries in log order. */
    /** The window metrics' entries of a run (attribution entries, under their own metric names, are not Entries). */
    public static List<Entry> readRun(Connection conn, long runId) throws SQLException {
        return readWhere(conn, "reconciliation_run_id = ?", ps -> ps.setLong(1, runId));
    }

    /** Every entry ever logged for {@code key}, oldest first: the key's audit trail. */
    public static List<Entry> readKey(Connection conn, WindowKey key) throws SQLException {
        return readWhere(conn, "window_start = ? AND campaign_id = ? AND channel_id = ?", ps -> {
            Timestamps.bind(ps, 1, key.windowStartMillis());
            ps.setString(2, key.campaignId());
            ps.setString(3, key.channelId());
        });
    }

    /** How many values a run changed, per reason (reasons without entries are absent). */
    public static Map<Reason, Long> countByReason(Connection conn, long runId) throws SQLException {
        String sql = "SELECT reason, count(*) AS n FROM " + TABLE + " WHERE reconciliation_run_id = ? GROUP BY reason";
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

    private static List<Entry> readWhere(Connection conn, String where, Binder binder) throws SQLException {
        // The window metrics' entries: attribution corrections share the log under their own metric names.
        String windowMetrics = java.util.Arrays.stream(Metric.values())
                .map(m -> "'" + m.column() + "'")
                .collect(java.util.stream.Collectors.joining(", "));
        try (PreparedStatement ps = conn.prepareStatement("SELECT * FROM " + TABLE + " WHERE (" + where
                + ") AND metric IN (" + windowMetrics + ") ORDER BY log_id")) {
            binder.bind(ps);
            List<Entry> entries = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    entries.add(new Entry(
                            rs.getLong("reconciliation_run_id"),
                            WindowColumns.readKey(rs),
                            Metric.valueOf(rs.getString("metric").toUpperCase(Locale.ROOT)),
                            MetricColumns.exact(rs, "before_value"),
                            MetricColumns.exact(rs, "after_value"),
                            Reason.of(rs.getString("reason"))));
                }
            }
            return entries;
        }
    }
}
