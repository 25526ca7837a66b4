package dev.recount.db.tables;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * {@code reconciliation_diffs}: per run, every window key whose stream and batch values are not identical.
 * A side's metric columns are all NULL when that side has no row for the key. The reconciler fills it with
 * one {@code INSERT ... SELECT} ({@link #INSERT_COLUMNS}); {@link #upsert} is the row-wise equivalent.
 */
public final class ReconciliationDiffsTable {
    public static final String TABLE = "reconciliation_diffs";

    /** "stream_impressions, ..., stream_events" */
    public static final String STREAM_COLUMNS = prefixed("stream_");
    /** "batch_impressions, ..., batch_events" */
    public static final String BATCH_COLUMNS = prefixed("batch_");
    /** Column list for inserts, in the order {@link #bind} uses. */
    public static final String INSERT_COLUMNS = "run_id, window_start, window_end, campaign_id, channel_id, status,"
            + " within_tolerance, stream_revision, " + STREAM_COLUMNS + ", " + BATCH_COLUMNS;

    static final String UPSERT = "INSERT INTO " + TABLE + " (" + INSERT_COLUMNS + ") VALUES ("
            + "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            + " ON CONFLICT (run_id, window_start, campaign_id, channel_id) DO UPDATE SET"
            + " window_end = EXCLUDED.window_end, status = EXCLUDED.status, within_tolerance = EXCLUDED.within_tolerance,"
            + " stream_revision = EXCLUDED.stream_revision, "
            + Arrays.stream(Metric.values())
                    .map(m -> "stream_" + m.column() + " = EXCLUDED.stream_" + m.column() + ", batch_" + m.column()
                            + " = EXCLUDED.batch_" + m.column())
                    .collect(Collectors.joining(", "));

    /** How a key's stream and batch rows compare. */
    public enum Status {
        MATCH,
        MISMATCH,
        MISSING_IN_STREAM,
        MISSING_IN_BATCH;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Status of(String wire) {
            return valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    /** One key's difference; {@code stream} or {@code batch} is null when that side has no row. */
    public record Row(
            WindowKey key,
            long windowEndMillis,
            Status status,
            boolean withinTolerance,
            Integer streamRevision,
            WindowMetrics stream,
            WindowMetrics batch) {
        public Row {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(status, "status");
            if ((stream == null) != (status == Status.MISSING_IN_STREAM)) {
                throw new IllegalArgumentException(
                        "stream metrics must be null exactly when status is missing_in_stream");
            }
            if ((batch == null) != (status == Status.MISSING_IN_BATCH)) {
                throw new IllegalArgumentException(
                        "batch metrics must be null exactly when status is missing_in_batch");
            }
        }

        /** stream − batch for {@code m}, a missing side counting as 0. */
        public BigInteger difference(Metric m) {
            return (stream == null ? BigInteger.ZERO : stream.get(m))
                    .subtract(batch == null ? BigInteger.ZERO : batch.get(m));
        }
    }

    private ReconciliationDiffsTable() {}

    public static void bind(PreparedStatement ps, long runId, Row r) throws SQLException {
        ps.setLong(1, runId);
        WindowColumns.bindKey(ps, 2, r.key(), r.windowEndMillis());
        ps.setString(6, r.status().wireName());
        ps.setBoolean(7, r.withinTolerance());
        if (r.streamRevision() == null) ps.setNull(8, Types.INTEGER);
        else ps.setInt(8, r.streamRevision());
        int i = 9;
        for (WindowMetrics side : new WindowMetrics[] {r.stream(), r.batch()}) {
            for (Metric m : Metric.values()) MetricColumns.bindNullable(ps, i++, m, side == null ? null : side.get(m));
        }
    }

    /** Idempotent row-wise write of one run's diffs (the reconciler itself inserts set-based). */
    public static void upsert(Connection conn, long runId, List<Row> rows) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(UPSERT)) {
            for (Row r : rows) {
                bind(ps, runId, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Every diff of a run, ordered by key, streamed to {@code sink} (a cursor when autocommit is off). */
    public static void forEachOfRun(Connection conn, long runId, Consumer<Row> sink) throws SQLException {
        String sql = "SELECT * FROM " + TABLE + " WHERE run_id = ? ORDER BY window_start, campaign_id, channel_id";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setFetchSize(5_000);
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) sink.accept(read(rs));
            }
        }
    }

    public static List<Row> readRun(Connection conn, long runId) throws SQLException {
        List<Row> rows = new ArrayList<>();
        forEachOfRun(conn, runId, rows::add);
        return rows;
    }

    /**
     * The {@code limit} diffs of a run with the given status that moved spend the most (by |stream − batch|
     * spend, then by the summed |difference| of the other metrics), largest first.
     */
    public static List<Row> largest(Connection conn, long runId, Status status, int limit) throws SQLException {
        String spend = "abs(coalesce(stream_spend_micros, 0) - coalesce(batch_spend_micros, 0))";
        String others = Arrays.stream(Metric.values())
                .filter(m -> m != Metric.SPEND_MICROS)
                .map(m -> "abs(coalesce(stream_" + m.column() + ", 0) - coalesce(batch_" + m.column() + ", 0))")
                .collect(Collectors.joining(" + "));
        String sql = "SELECT * FROM " + TABLE + " WHERE run_id = ? AND status = ?" + " ORDER BY " + spend + " DESC, "
                + others + " DESC, window_start, campaign_id, channel_id LIMIT ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setLong(1, runId);
            ps.setString(2, status.wireName());
            ps.setInt(3, limit);
            List<Row> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) rows.add(read(rs));
            }
            return rows;
        }
    }

    public static Row read(ResultSet rs) throws SQLException {
        WindowKey key = WindowColumns.readKey(rs);
        Status status = Status.of(rs.getString("status"));
        Integer revision = (Integer) rs.getObject("stream_revision");
        WindowMetrics stream = status == Status.MISSING_IN_STREAM ? null : MetricColumns.read(rs, "stream_");
        WindowMetrics batch = status == Status.MISSING_IN_BATCH ? null : MetricColumns.read(rs, "batch_");
        return new Row(
                key,
                Timestamps.read(rs, "window_end"),
                status,
                rs.getBoolean("within_tolerance"),
                revision,
                stream,
                batch);
    }

    private static String prefixed(String prefix) {
        return Arrays.stream(Metric.values()).map(m -> prefix + m.column()).collect(Collectors.joining(", "));
    }
}
