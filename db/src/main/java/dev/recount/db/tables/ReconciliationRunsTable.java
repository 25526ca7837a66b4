package dev.recount.db.tables;

import dev.recount.core.sets.MetricSet;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code reconciliation_runs}: one row per reconciliation, whatever its outcome. The row is written (and
 * committed) at the start, so a run that dies is still visible; {@link #succeed} is called inside the run's
 * own transaction, so "succeeded" and the corrections it applied become visible together. A run holds a
 * liveness lock while it works ({@link RunLiveness}): a run whose process died is marked failed by the next
 * run ({@link #failAbandoned}). A dry run ({@code dry_run}) compared and reported but applied nothing.
 *
 * <p>{@code metric_sets} (V26) names the metric sets a run covers: the sets it was asked for while it runs or if it
 * failed, the sets it reconciled once it succeeded. NULL (rows from before V26, or a run started without naming sets)
 * means the default set only.
 */
public final class ReconciliationRunsTable {
    public static final String TABLE = "reconciliation_runs";
    private static final RunLiveness LIVENESS = new RunLiveness(TABLE, "recount-reconcile-run:");

    public enum Status {
        RUNNING,
        SUCCEEDED,
        FAILED;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Status of(String wire) {
            return valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    public enum Verdict {
        WITHIN_TOLERANCE,
        BEYOND_TOLERANCE;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Verdict of(String wire) {
            return wire == null ? null : valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    /** What a finished run found. {@code totalsJson} is a JSON object (the report's range totals). */
    public record Outcome(
            Verdict verdict,
            long keysCompared,
            long keysMatched,
            long keysMismatched,
            long keysMissingInStream,
            long keysMissingInBatch,
            long valuesCorrected,
            String totalsJson,
            String reportDir) {
        public Outcome {
            java.util.Objects.requireNonNull(verdict, "verdict");
            java.util.Objects.requireNonNull(totalsJson, "totalsJson");
            if (keysCompared != keysMatched + keysMismatched + keysMissingInStream + keysMissingInBatch) {
                throw new IllegalArgumentException(
                        "keysCompared " + keysCompared + " is not the sum of the classified keys");
            }
        }
    }

    /**
     * A run as read back; the outcome columns are null unless it succeeded. For a dry run {@code valuesCorrected}
     * is how many values it would have corrected. {@code metricSets} is null for a run that named none (the default
     * set only).
     */
    public record Run(
            long runId,
            long rangeFrom,
            long rangeTo,
            Long batchRunId,
            boolean dryRun,
            Status status,
            Verdict verdict,
            Long keysCompared,
            Long keysMatched,
            Long keysMismatched,
            Long keysMissingInStream,
            Long keysMissingInBatch,
            Long valuesCorrected,
            String totalsJson,
            String reportDir,
            String error,
            List<String> metricSets) {
        /** The sets the run covers, NULL read as the default set alone. */
        public List<String> metricSetsOrDefault() {
            return metricSets == null ? List.of(MetricSet.DEFAULT) : metricSets;
        }
    }

    /** A row covers set {@code ?}: it names it, or names none and the set is the default. */
    private static final String COVERS_SET =
            "? = ANY (coalesce(metric_sets, ARRAY['" + MetricSet.DEFAULT + "']::text[]))";

    private ReconciliationRunsTable() {}

    /**
     * Records a run as running and returns its id. The caller commits it on its own (autocommit), so the row is
     * visible even if the run dies. {@code conn} takes the run's liveness lock in the same statement and holds it
     * until {@link #releaseLiveness} (or until its session ends, when the process dies).
     */
    public static long start(Connection conn, long fromMillis, long toMillis, Long batchRunId, boolean dryRun)
            throws SQLException {
        return start(conn, fromMillis, toMillis, batchRunId, dryRun, null);
    }

    /**
     * As {@link #start(Connection, long, long, Long, boolean)}, recording the metric sets the run is asked to
     * reconcile ({@code metricSets}; null leaves {@code metric_sets} NULL: the default set only).
     */
    public static long start(
            Connection conn, long fromMillis, long toMillis, Long batchRunId, boolean dryRun, List<String> metricSets)
            throws SQLException {
        String sql = LIVENESS.insertHoldingLock("INSERT INTO " + TABLE + " (range_from, range_to, batch_run_id,"
                + " dry_run, status" + (metricSets == null ? "" : ", metric_sets") + ") VALUES (?, ?, ?, ?, 'running'"
                + (metricSets == null ? "" : ", ?") + ") RETURNING run_id");
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            if (batchRunId == null) ps.setNull(3, Types.BIGINT);
            else ps.setLong(3, batchRunId);
            ps.setBoolean(4, dryRun);
            int next = 5;
            if (metricSets != null) ps.setArray(next++, textArray(conn, metricSets));
            ps.setInt(next, LIVENESS.namespace(conn));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Succeeded {@code affected} batch runs that recomputed windows, started within {@code lookBackMillis} of now,
     * that no applied reconciliation names as its batch run; oldest first, at most {@code limit}. Their backfill
     * offsets are committed, so nothing else would bring their windows into window_metrics: `correct` killed
     * between its two steps, its reconcile failed, or `backfill affected` run alone.
     */
    public static List<Long> unreconciledAffectedRuns(Connection conn, long lookBackMillis, int limit)
            throws SQLException {
        String sql = "SELECT b.run_id FROM " + BatchRunsTable.TABLE + " b WHERE b.mode = 'affected'"
                + " AND b.status = 'succeeded' AND b.range_from IS NOT NULL"
                + " AND b.started_at >= now() - ? * interval '1 millisecond'"
                + " AND NOT EXISTS (SELECT 1 FROM " + TABLE + " r WHERE r.batch_run_id = b.run_id"
                + " AND r.status = 'succeeded' AND NOT r.dry_run) ORDER BY b.run_id LIMIT ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setLong(1, lookBackMillis);
            ps.setInt(2, limit);
            List<Long> runs = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) runs.add(rs.getLong(1));
            }
            return runs;
        }
    }

    /** The succeeded run whose report is recorded at {@code reportDir}, if any. */
    public static Optional<Long> succeededWithReport(Connection conn, String reportDir) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT run_id FROM " + TABLE + " WHERE status = 'succeeded' AND report_dir = ?")) {
            ps.setString(1, reportDir);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getLong(1)) : Optional.empty();
            }
        }
    }

    /** As {@link #start(Connection, long, long, Long, boolean)}, not a dry run. */
    public static long start(Connection conn, long fromMillis, long toMillis, Long batchRunId) throws SQLException {
        return start(conn, fromMillis, toMillis, batchRunId, false);
    }

    /** Releases the liveness lock {@link #start} took on {@code conn}; call when the run has ended either way. */
    public static void releaseLiveness(Connection conn, long runId) throws SQLException {
        LIVENESS.release(conn, runId);
    }

    /**
     * Fails every run other than {@code self} still marked running whose liveness lock nobody holds: its process
     * ended without finishing (killed, out of memory, machine lost), with error {@code "abandoned: ..."}. Nothing
     * else needs undoing: a run's diffs, corrections, log entries and success mark are one transaction, which
     * never committed. Returns the ids of the runs it failed.
     */
    public static List<Long> failAbandoned(Connection conn, long self) throws SQLException {
        return LIVENESS.failAbandoned(conn, self);
    }

    /** Marks the run succeeded with its outcome. Call inside the transaction that applied its corrections. */
    public static void succeed(Connection conn, long runId, Outcome o) throws SQLException {
        succeed(conn, runId, o, null);
    }

    /**
     * As {@link #succeed(Connection, long, Outcome)}, recording {@code reconciledSets} as the sets the run
     * reconciled (null keeps what {@link #start} recorded): a set whose range no batch run covered is left out, so
     * that nothing counts its range as reconciled for it.
     */
    public static void succeed(Connection conn, long runId, Outcome o, List<String> reconciledSets)
            throws SQLException {
        String sql = "UPDATE " + TABLE + " SET status = 'succeeded', verdict = ?, keys_compared = ?, keys_matched = ?,"
                + " keys_mismatched = ?, keys_missing_in_stream = ?, keys_missing_in_batch = ?, values_corrected = ?,"
                + " totals = ?::jsonb, report_dir = ?, finished_at = clock_timestamp(), error = NULL"
                + (reconciledSets == null ? "" : ", metric_sets = ?")
                + " WHERE run_id = ? AND status = 'running'";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, o.verdict().wireName());
            ps.setLong(2, o.keysCompared());
            ps.setLong(3, o.keysMatched());
            ps.setLong(4, o.keysMismatched());
            ps.setLong(5, o.keysMissingInStream());
            ps.setLong(6, o.keysMissingInBatch());
            ps.setLong(7, o.valuesCorrected());
            ps.setString(8, o.totalsJson());
            if (o.reportDir() == null) ps.setNull(9, Types.VARCHAR);
            else ps.setString(9, o.reportDir());
            int next = 10;
            if (reconciledSets != null) ps.setArray(next++, textArray(conn, reconciledSets));
            ps.setLong(next, runId);
            requireOne(ps.executeUpdate(), runId);
        }
    }

    /** Marks the run failed; its corrections were rolled back, so only the error is recorded. */
    public static void fail(Connection conn, long runId, String error) throws SQLException {
        String sql = "UPDATE " + TABLE + " SET status = 'failed', error = ?, finished_at = clock_timestamp()"
                + " WHERE run_id = ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, error == null || error.isBlank() ? "unknown error" : error);
            ps.setLong(2, runId);
            requireOne(ps.executeUpdate(), runId);
        }
    }

    public static Optional<Run> find(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT * FROM " + TABLE + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    /**
     * The exact ranges {@code [from, to)} of succeeded runs (not dry runs) that lie within {@code [fromMillis, toMillis)},
     * as {@code long[]{from, to}} pairs ordered by start: what `nightly-dates` treats as done.
     */
    public static List<long[]> succeededRangesWithin(Connection conn, long fromMillis, long toMillis)
            throws SQLException {
        return succeededRangesWithin(conn, fromMillis, toMillis, null);
    }

    /**
     * As {@link #succeededRangesWithin(Connection, long, long)}, of the runs that reconciled metric set {@code set}
     * (a run without {@code metric_sets} reconciled the default set only); null: of every run, whatever its sets.
     */
    public static List<long[]> succeededRangesWithin(Connection conn, long fromMillis, long toMillis, String set)
            throws SQLException {
        String sql = "SELECT DISTINCT range_from, range_to FROM " + TABLE
                + " WHERE status = 'succeeded' AND NOT dry_run AND range_from >= ? AND range_to <= ?"
                + (set == null ? "" : " AND " + COVERS_SET)
                + " ORDER BY range_from, range_to";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            if (set != null) ps.setString(3, set);
            List<long[]> ranges = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ranges.add(new long[] {Timestamps.read(rs, "range_from"), Timestamps.read(rs, "range_to")});
                }
            }
            return ranges;
        }
    }

    private static Run read(ResultSet rs) throws SQLException {
        return new Run(
                rs.getLong("run_id"),
                Timestamps.read(rs, "range_from"),
                Timestamps.read(rs, "range_to"),
                (Long) rs.getObject("batch_run_id"),
                rs.getBoolean("dry_run"),
                Status.of(rs.getString("status")),
                Verdict.of(rs.getString("verdict")),
                (Long) rs.getObject("keys_compared"),
                (Long) rs.getObject("keys_matched"),
                (Long) rs.getObject("keys_mismatched"),
                (Long) rs.getObject("keys_missing_in_stream"),
                (Long) rs.getObject("keys_missing_in_batch"),
                (Long) rs.getObject("values_corrected"),
                rs.getString("totals"),
                rs.getString("report_dir"),
                rs.getString("error"),
                metricSets(rs));
    }

    /** {@code metric_sets} of a row; null when the row names none. */
    private static List<String> metricSets(ResultSet rs) throws SQLException {
        Array a = rs.getArray("metric_sets");
        return a == null ? null : List.copyOf(Arrays.asList((String[]) a.getArray()));
    }

    private static Array textArray(Connection conn, List<String> values) throws SQLException {
        return conn.createArrayOf("text", values.toArray(String[]::new));
    }

    private static void requireOne(int updated, long runId) {
        if (updated != 1) throw new IllegalStateException("reconciliation run " + runId + " not found or not running");
    }
}
