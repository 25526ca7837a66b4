package dev.recount.db.tables;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * {@code reconciliation_diffs} (every set has its own): per run, every window key whose stream and batch values are not identical.
 * A side's measure columns are all NULL when that side has no row for the key. The reconciler fills it with
 * one {@code INSERT ... SELECT} ({@link #insertColumns}); {@link #upsert} is the row-wise equivalent.
 */
public final class ReconciliationDiffsTable {
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "reconciliation_diffs";

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
            MeasureValues stream,
            MeasureValues batch) {
        public Row {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(status, "status");
            if ((stream == null) != (status == Status.MISSING_IN_STREAM)) {
                throw new IllegalArgumentException(
                        "stream values must be null exactly when status is missing_in_stream");
            }
            if ((batch == null) != (status == Status.MISSING_IN_BATCH)) {
                throw new IllegalArgumentException("batch values must be null exactly when status is missing_in_batch");
            }
        }

        /** stream − batch of measure {@code m}, a missing side counting as 0. */
        public BigInteger difference(int m) {
            return (stream == null ? BigInteger.ZERO : stream.get(m))
                    .subtract(batch == null ? BigInteger.ZERO : batch.get(m));
        }
    }

    private final SetColumns columns;
    private final String table;

    public ReconciliationDiffsTable(SetTables tables) {
        this.columns = new SetColumns(tables);
        this.table = tables.reconciliationDiffs();
    }

    public String table() {
        return table;
    }

    /** "stream_impressions, ..., stream_events" */
    public String streamColumns() {
        return columns.measureList("stream_");
    }

    /** "batch_impressions, ..., batch_events" */
    public String batchColumns() {
        return columns.measureList("batch_");
    }

    /** Column list for inserts, in the order {@link #bind} uses. */
    public String insertColumns() {
        return "run_id, " + columns.windowList() + ", status, within_tolerance, stream_revision, " + streamColumns()
                + ", " + batchColumns();
    }

    private String upsert() {
        int n = 1 + 2 + columns.dimensionCount() + 3 + 2 * columns.measureCount();
        List<String> sides = new ArrayList<>();
        for (Measure m : columns.set().measures()) {
            sides.add("stream_" + m.name() + " = EXCLUDED.stream_" + m.name());
            sides.add("batch_" + m.name() + " = EXCLUDED.batch_" + m.name());
        }
        return "INSERT INTO " + table + " (" + insertColumns() + ") VALUES (" + SetColumns.parameters(n) + ")"
                + " ON CONFLICT (run_id, " + columns.keyList() + ") DO UPDATE SET"
                + " window_end = EXCLUDED.window_end, status = EXCLUDED.status,"
                + " within_tolerance = EXCLUDED.within_tolerance, stream_revision = EXCLUDED.stream_revision, "
                + String.join(", ", sides);
    }

    public void bind(PreparedStatement ps, long runId, Row r) throws SQLException {
        ps.setLong(1, runId);
        int i = columns.bindWindow(ps, 2, r.key(), r.windowEndMillis());
        ps.setString(i++, r.status().wireName());
        ps.setBoolean(i++, r.withinTolerance());
        if (r.streamRevision() == null) ps.setNull(i++, Types.INTEGER);
        else ps.setInt(i++, r.streamRevision());
        for (MeasureValues side : new MeasureValues[] {r.stream(), r.batch()}) {
            for (int m = 0; m < columns.measureCount(); m++) {
                columns.bindNullable(ps, i++, m, side == null ? null : side.get(m));
            }
        }
    }

    /** Idempotent row-wise write of one run's diffs (the reconciler itself inserts set-based). */
    public void upsert(Connection conn, long runId, List<Row> rows) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(upsert())) {
            for (Row r : rows) {
                bind(ps, runId, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Every diff of a run, ordered by key, streamed to {@code sink} (a cursor when autocommit is off). */
    public void forEachOfRun(Connection conn, long runId, Consumer<Row> sink) throws SQLException {
        String sql = "SELECT * FROM " + table + " WHERE run_id = ? ORDER BY " + columns.keyList();
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setFetchSize(5_000);
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) sink.accept(read(rs));
            }
        }
    }

    public List<Row> readRun(Connection conn, long runId) throws SQLException {
        List<Row> rows = new ArrayList<>();
        forEachOfRun(conn, runId, rows::add);
        return rows;
    }

    /**
     * The {@code limit} diffs of a run with the given status that moved money the most: by the summed |stream − batch|
     * of the set's sums (spend, for the default set), then of its counts, largest first.
     */
    public List<Row> largest(Connection conn, long runId, Status status, int limit) throws SQLException {
        List<String> sums = new ArrayList<>();
        List<String> counts = new ArrayList<>();
        for (Measure m : columns.set().measures()) {
            String d = "abs(coalesce(stream_" + m.name() + ", 0) - coalesce(batch_" + m.name() + ", 0))";
            (m.isCount() ? counts : sums).add(d);
        }
        String order = (sums.isEmpty() ? "" : String.join(" + ", sums) + " DESC, ") + String.join(" + ", counts)
                + " DESC, " + columns.keyList();
        String sql = "SELECT * FROM " + table + " WHERE run_id = ? AND status = ? ORDER BY " + order + " LIMIT ?";
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

    public Row read(ResultSet rs) throws SQLException {
        WindowKey key = columns.readKey(rs);
        Status status = Status.of(rs.getString("status"));
        Integer revision = (Integer) rs.getObject("stream_revision");
        MeasureValues stream = status == Status.MISSING_IN_STREAM ? null : columns.readValues(rs, "stream_");
        MeasureValues batch = status == Status.MISSING_IN_BATCH ? null : columns.readValues(rs, "batch_");
        return new Row(
                key,
                Timestamps.read(rs, "window_end"),
                status,
                rs.getBoolean("within_tolerance"),
                revision,
                stream,
                batch);
    }
}
