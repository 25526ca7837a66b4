package dev.recount.db.tables;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code batch_runs}: one row per batch run, written at its start and updated at its end, naming the metric sets it
 * computed ({@code metric_sets}, V26; NULL on a row of an older release: the default set only).
 */
public final class BatchRunsTable {
    public static final String TABLE = "batch_runs";
    /**
     * The key under which an `affected` run records the windows it recomputed of each set, as an array of ISO-8601
     * window starts, in {@code details.}{@value #DETAILS_SETS}{@code .<set>}; a run before metric sets recorded the
     * default set's at the top level of {@code details} ({@link #recordedWindows} reads either back).
     */
    public static final String DETAILS_WINDOWS = "windows";
    /** The key of {@code details} under which a run records what it did per metric set, an object by set name. */
    public static final String DETAILS_SETS = "sets";
    /** The set a run row without {@code metric_sets} computed (a run of a release before metric sets). */
    public static final String DEFAULT_SET = "default";

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

    /**
     * A finished or running run, as read back. Range bounds are null for an `affected` run with no range.
     *
     * @param metricSets the sets it computed, in its order; the default set alone for a row without them
     */
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
            String error,
            List<String> metricSets) {
        public Run {
            metricSets = metricSets == null ? List.of(DEFAULT_SET) : List.copyOf(metricSets);
        }
    }

    private BatchRunsTable() {}

    /**
     * Records a run as running (committed on its own, so the row is visible even if the run later dies) and takes
     * the run's <em>liveness lock</em>: a session advisory lock that {@code conn} holds until the run ends and
     * releases with {@code pg_advisory_unlock_all()} — or that PostgreSQL drops when the run's process dies. Taken
     * in the same statement as the insert, so no other session can see the row without its lock held.
     * {@link #failAbandoned} relies on that (the mechanism, shared with reconciliation runs: {@link RunLiveness}).
     *
     * @param metricSets the sets the run computes, recorded in {@code metric_sets}
     */
    public static long start(
            Connection conn, Mode mode, Long fromMillis, Long toMillis, boolean forced, List<String> metricSets)
            throws SQLException {
        if (metricSets.isEmpty()) throw new IllegalArgumentException("a run computes at least one metric set");
        String sql = LIVENESS.insertHoldingLock("INSERT INTO " + TABLE
                + " (mode, range_from, range_to, status, forced, metric_sets)"
                + " VALUES (?, ?, ?, 'running', ?, ?) RETURNING run_id");
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, mode.wireName());
            bindNullableTs(ps, 2, fromMillis);
            bindNullableTs(ps, 3, toMillis);
            ps.setBoolean(4, forced);
            ps.setArray(5, conn.createArrayOf("text", metricSets.toArray()));
            ps.setInt(6, livenessNamespace(conn));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * As {@link #start(Connection, Mode, Long, Long, boolean, List)} without naming sets: {@code metric_sets} stays
     * NULL, which reads as the default set alone (as a row written before metric sets).
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
     * (killed, out of memory, machine lost). Drops their staged rows (windows and attribution) from the staging
     * tables of the default set and of {@code sets}; their results were never committed (results and the success mark
     * are one transaction), so nothing else needs undoing. A run that is alive holds its lock and is left alone.
     * Returns the ids of the runs it failed.
     *
     * <p>A set no longer declared keeps its staged rows of such a run: harmless (staging is keyed by run, and no run
     * replaces from another's rows), dropped with its tables.
     *
     * @param sets the staging tables to clear besides the default set's: those of every declared set (those of a set
     *     not migrated yet do not exist and are skipped)
     */
    public static List<Long> failAbandoned(Connection conn, long self, Collection<SetTables> sets) throws SQLException {
        Set<String> staging = new LinkedHashSet<>(
                List.of(BatchWindowMetricsTable.STAGING_TABLE, BatchAttributionMetricsTable.STAGING_TABLE));
        for (SetTables t : sets) {
            if (t.set().isDefault()) continue;
            // A set declared but not migrated yet has no tables, and cannot have staged anything.
            for (String table : List.of(t.batchWindowMetricsStaging(), t.batchAttributionMetricsStaging())) {
                if (exists(conn, table)) staging.add(table);
            }
        }
        return LIVENESS.failAbandoned(
                conn,
                self,
                staging.stream()
                        .map(table -> "DELETE FROM " + table + " s USING gone WHERE s.run_id = gone.run_id")
                        .toArray(String[]::new));
    }

    /** Whether {@code table} exists in {@code conn}'s schema. */
    private static boolean exists(Connection conn, String table) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** {@link #failAbandoned(Connection, long, Collection)} for the default set's staging tables alone. */
    public static List<Long> failAbandoned(Connection conn, long self) throws SQLException {
        return failAbandoned(conn, self, List.of());
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
                        rs.getString("error"),
                        metricSets(rs)));
            }
        }
    }

    /** The row's {@code metric_sets}; null when NULL (or on a schema before V26, which has no such column). */
    private static List<String> metricSets(ResultSet rs) throws SQLException {
        java.sql.ResultSetMetaData meta = rs.getMetaData();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
            if (meta.getColumnName(i).equals("metric_sets")) {
                java.sql.Array a = rs.getArray(i);
                return a == null ? null : Arrays.asList((String[]) a.getArray());
            }
        }
        return null;
    }

    /**
     * The window starts (epoch ms, ascending) that run {@code runId} recorded as recomputed for the default set
     * ({@link #recordedWindows(Connection, long, String)}).
     */
    public static List<Long> recordedWindows(Connection conn, long runId) throws SQLException {
        return recordedWindows(conn, runId, DEFAULT_SET);
    }

    /**
     * The window starts (epoch ms, ascending) that run {@code runId} recorded as recomputed for {@code set}: under
     * {@link #DETAILS_SETS}{@code .<set>.}{@link #DETAILS_WINDOWS}, or for the default set of a run that recorded no
     * sets (before metric sets), under {@link #DETAILS_WINDOWS}. Empty when it recorded none for the set (or the run
     * does not exist).
     */
    public static List<Long> recordedWindows(Connection conn, long runId, String set) throws SQLException {
        String sql = "SELECT w.iso::timestamptz AS window_start FROM " + TABLE
                + ", jsonb_array_elements_text(coalesce(details -> ? -> ? -> ?,"
                + " CASE WHEN details -> ? IS NULL AND ? = ? THEN details -> ? END)) AS w(iso)"
                + " WHERE run_id = ? ORDER BY 1";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, DETAILS_SETS);
            ps.setString(2, set);
            ps.setString(3, DETAILS_WINDOWS);
            ps.setString(4, DETAILS_SETS);
            ps.setString(5, set);
            ps.setString(6, DEFAULT_SET);
            ps.setString(7, DETAILS_WINDOWS);
            ps.setLong(8, runId);
            List<Long> starts = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) starts.add(Timestamps.read(rs, "window_start"));
            }
            return starts;
        }
    }

    /**
     * What succeeded {@code range} and {@code nightly} runs have covered for the default set before {@code
     * beforeMillis} ({@link #coveredRanges(Connection, long, String)}).
     */
    public static List<long[]> coveredRanges(Connection conn, long beforeMillis) throws SQLException {
        return coveredRanges(conn, beforeMillis, DEFAULT_SET);
    }

    /**
     * What succeeded {@code range} and {@code nightly} runs of {@code set} (their {@code metric_sets} name it; NULL
     * names the default set) have covered before {@code beforeMillis}: their ranges merged into disjoint {@code
     * long[]{from, to}} pairs, ordered. The same rule the reconciler uses to decide whether a range may be reconciled
     * for a set (`affected` runs are left out: their recorded range spans windows they did not necessarily
     * recompute).
     */
    public static List<long[]> coveredRanges(Connection conn, long beforeMillis, String set) throws SQLException {
        String sql = "SELECT lower(r) AS range_from, upper(r) AS range_to FROM unnest(coalesce((SELECT"
                + " range_agg(tstzrange(range_from, range_to)) FROM " + TABLE
                + " WHERE status = 'succeeded' AND mode <> 'affected' AND range_from IS NOT NULL"
                + " AND range_to IS NOT NULL AND range_from < ?"
                + " AND coalesce(? = ANY (metric_sets), metric_sets IS NULL AND ? = ?)), '{}'::tstzmultirange)) AS r"
                + " ORDER BY 1";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, beforeMillis);
            ps.setString(2, set);
            ps.setString(3, set);
            ps.setString(4, DEFAULT_SET);
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
