package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@code batch_runs}: one row per batch run, written at its start and updated at its end. */
public final class BatchRunsTable {
    public static final String TABLE = "batch_runs";
    /**
     * The key of {@code details} under which an `affected` run records the windows it recomputed, as an array of
     * ISO-8601 window starts ({@link #recordedWindows} reads it back).
     */
    public static final String DETAILS_WINDOWS = "windows";

    private static final RunLiveness LIVENESS = new RunLiveness(TABLE, "recount-batch-run:");

    public enum Mode {
        RANGE,
        AFFECTED,
        NIGHTLY;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public enum Status {
        RUNNING,
        SUCCEEDED,
        FAILED;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** A finished or running run, as read back. Range bounds are null for an `affected` run with no range. */
    public record Run(
            long runId,
            Mode mode,
            Long rangeFrom,
            Long rangeTo,
            Status status,
            boolean forced,
            Long eventsRead,
            Long windowsWritten,
            Long windowsDeleted,
            String details,
            String error) {}

    private BatchRunsTable() {}

    /**
     * Records a run as running (committed on its own, so the row is visible even if the run later dies) and takes
     * the run's <em>liveness lock</em>: a session advisory lock that {@code conn} holds until the run ends and
     * releases with {@code pg_advisory_unlock_all()} — or that PostgreSQL drops when the run's process dies. Taken
     * in the same statement as the insert, so no other session can see the row without its lock held.
     * {@link #failAbandoned} relies on that (the mechanism, shared with reconciliation runs: {@link RunLiveness}).
     */
    public static long start(Connection conn, Mode mode, Long fromMillis, Long toMillis, boolean forced)
            throws SQLException {
        String sql = LIVENESS.insertHoldingLock("INSERT INTO " + TABLE + " (mode, range_from, range_to, status, forced)"
                + " VALUES (?, ?, ?, 'running', ?) RETURNING run_id");
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, mode.wireName());
            bindNullableTs(ps, 2, fromMillis);
            bindNullableTs(ps, 3, toMillis);
            ps.setBoolean(4, forced);
            ps.setInt(5, livenessNamespace(conn));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Marks the run succeeded; {@code detailsJson} may be null. Call inside the transaction that wrote the results. */
    public static void succeed(
            Connection conn,
            long runId,
            long eventsRead,
            long windowsWritten,
            long windowsDeleted,
            Long fromMillis,
            Long toMillis,
            String detailsJson)
            throws SQLException {
        String sql = "UPDATE " + TABLE + " SET status = 'succeeded', events_read = ?, windows_written = ?,"
                + " windows_deleted = ?, range_from = COALESCE(?, range_from), range_to = COALESCE(?, range_to),"
                + " details = ?::jsonb, finished_at = now() WHERE run_id = ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setLong(1, eventsRead);
            ps.setLong(2, windowsWritten);
            ps.setLong(3, windowsDeleted);
            bindNullableTs(ps, 4, fromMillis);
            bindNullableTs(ps, 5, toMillis);
            if (detailsJson == null) ps.setNull(6, Types.VARCHAR);
            else ps.setString(6, detailsJson);
            ps.setLong(7, runId);
            requireOne(ps.executeUpdate(), runId);
        }
    }

    /**
     * Fails every run still marked running whose liveness lock nobody holds: its process ended without finishing
     * (killed, out of memory, machine lost). Drops their staged rows (windows and attribution); their results were
     * never committed (results and the success mark are one transaction), so nothing else needs undoing. A run that
     * is alive holds its lock and is left alone. Returns the ids of the runs it failed.
     */
    public static List<Long> failAbandoned(Connection conn, long self) throws SQLException {
        return LIVENESS.failAbandoned(
                conn,
                self,
                "DELETE FROM " + BatchWindowMetricsTable.STAGING_TABLE + " s"
                        + " USING gone WHERE s.run_id = gone.run_id",
                "DELETE FROM " + BatchAttributionMetricsTable.STAGING_TABLE + " s"
                        + " USING gone WHERE s.run_id = gone.run_id");
    }

    /** Advisory-lock namespace of liveness locks: per schema, so environments sharing a database never meet. */
    public static int livenessNamespace(Connection conn) throws SQLException {
        return LIVENESS.namespace(conn);
    }

    /**
     * Records a running run as failed. A run that already succeeded stays so (its results are committed, and the
     * catch-up of `correct` reconciles only succeeded runs); then this fails, naming it.
     */
    public static void fail(Connection conn, long runId, String error) throws SQLException {
        String sql = "UPDATE " + TABLE + " SET status = 'failed', error = ?, finished_at = now() WHERE run_id = ?"
                + " AND status = 'running'";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, error == null ? "unknown error" : error);
            ps.setLong(2, runId);
            if (ps.executeUpdate() != 1)
                throw new IllegalStateException(
                        "batch run " + runId + " is not running (succeeded already, or not found)");
        }
    }

    public static Optional<Run> find(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT * FROM " + TABLE + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return Optional.empty();
                return Optional.of(new Run(
                        rs.getLong("run_id"),
                        Mode.valueOf(rs.getString("mode").toUpperCase(java.util.Locale.ROOT)),
                        Timestamps.readNullable(rs, "range_from"),
                        Timestamps.readNullable(rs, "range_to"),
                        Status.valueOf(rs.getString("status").toUpperCase(java.util.Locale.ROOT)),
                        rs.getBoolean("forced"),
                        (Long) rs.getObject("events_read"),
                        (Long) rs.getObject("windows_written"),
                        (Long) rs.getObject("windows_deleted"),
                        rs.getString("details"),
                        rs.getString("error")));
            }
        }
    }

    /**
     * The window starts (epoch ms, ascending) that run {@code runId} recorded as recomputed under
     * {@link #DETAILS_WINDOWS}; empty when it recorded none (or the run does not exist).
     */
    public static List<Long> recordedWindows(Connection conn, long runId) throws SQLException {
        String sql = "SELECT w.iso::timestamptz AS window_start FROM " + TABLE
                + ", jsonb_array_elements_text(details -> ?) AS w(iso) WHERE run_id = ? ORDER BY 1";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, DETAILS_WINDOWS);
            ps.setLong(2, runId);
            List<Long> starts = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) starts.add(Timestamps.read(rs, "window_start"));
            }
            return starts;
        }
    }

    /**
     * What succeeded {@code range} and {@code nightly} runs have covered before {@code beforeMillis}: their ranges
     * merged into disjoint {@code long[]{from, to}} pairs, ordered. The same rule the reconciler uses to decide
     * whether a range may be reconciled (`affected` runs are left out: their recorded range spans windows they did
     * not necessarily recompute).
     */
    public static List<long[]> coveredRanges(Connection conn, long beforeMillis) throws SQLException {
        String sql = "SELECT lower(r) AS range_from, upper(r) AS range_to FROM unnest(coalesce((SELECT"
                + " range_agg(tstzrange(range_from, range_to)) FROM " + TABLE
                + " WHERE status = 'succeeded' AND mode <> 'affected' AND range_from IS NOT NULL"
                + " AND range_to IS NOT NULL AND range_from < ?), '{}'::tstzmultirange)) AS r ORDER BY 1";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, beforeMillis);
            List<long[]> ranges = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ranges.add(new long[] {Timestamps.read(rs, "range_from"), Timestamps.read(rs, "range_to")});
                }
            }
            return ranges;
        }
    }

    private static void bindNullableTs(PreparedStatement ps, int i, Long millis) throws SQLException {
        if (millis == null) ps.setNull(i, Types.TIMESTAMP_WITH_TIMEZONE);
        else Timestamps.bind(ps, i, millis);
    }

    private static void requireOne(int updated, long runId) {
        if (updated != 1) throw new IllegalStateException("batch run " + runId + " not found");
    }
}
