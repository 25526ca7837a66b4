package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Liveness locks of the runs recorded in one runs table ({@code batch_runs}, {@code reconciliation_runs}): how
 * the next run tells a run that is still working from one whose process died without finishing.
 *
 * <p>A run inserts its row as {@code running} and, in the same statement, takes a session advisory lock keyed
 * by its run id (so no other session can ever see the row without the lock held). The run's connection holds
 * the lock until the run ends ({@link #release}); if the process dies (kill -9, out of memory, lost machine),
 * PostgreSQL ends the session and drops the lock. {@link #failAbandoned} then marks every {@code running} row
 * whose lock nobody holds as failed. Each table has its own lock namespace, per schema, so environments sharing
 * a database never meet. The table needs {@code run_id bigint}, {@code status text}, {@code finished_at} and
 * {@code error} columns.
 */
public final class RunLiveness {
    /** The error recorded on an abandoned run; {@link #failAbandoned} appends the id of the run that found it. */
    public static final String ABANDONED =
            "abandoned: its process ended without finishing the run (killed, out of" + " memory or lost)";

    private final String table;
    private final String namespacePrefix;

    /**
     * @param table           the runs table
     * @param namespacePrefix names the lock namespace; the schema is appended (e.g. {@code "recount-batch-run:"})
     */
    public RunLiveness(String table, String namespacePrefix) {
        this.table = Objects.requireNonNull(table, "table");
        this.namespacePrefix = Objects.requireNonNull(namespacePrefix, "namespacePrefix");
    }

    /**
     * Wraps {@code insertReturningRunId} (an {@code INSERT INTO <table> ... RETURNING run_id} that records the run
     * as running) so that the same statement takes the run's liveness lock. The result set has the run id in
     * column 1. Bind the insert's parameters first, then {@link #namespace} at index (insert's parameters + 1).
     */
    public String insertHoldingLock(String insertReturningRunId) {
        return "WITH run AS (" + insertReturningRunId + ") SELECT run_id, pg_advisory_lock(?, " + key("run_id")
                + ") FROM run";
    }

    /** Releases {@code runId}'s liveness lock held by {@code conn} (the connection goes back to a pool clean). */
    public void release(Connection conn, long runId) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_unlock(?, " + key("?::bigint") + ")")) {
            ps.setInt(1, namespace(conn));
            ps.setLong(2, runId);
            ps.execute();
        }
    }

    /**
     * Fails every run of the table still marked running whose liveness lock nobody holds, other than {@code self},
     * and returns their ids. A run that is alive holds its lock and is left alone. {@code cleanups} are
     * data-modifying statements run in the same statement for the failed runs, which they read from the CTE
     * {@code gone (run_id)}, e.g. deleting their staged rows.
     *
     * <p>The try-locks are transaction locks, released when this statement commits; the materialised CTE keeps
     * them to the running rows, so the lock table never sees one entry per historical run.
     */
    public List<Long> failAbandoned(Connection conn, long self, String... cleanups) throws SQLException {
        StringBuilder cleared = new StringBuilder();
        for (int i = 0; i < cleanups.length; i++)
            cleared.append(", cleared_")
                    .append(i)
                    .append(" AS (")
                    .append(cleanups[i])
                    .append(')');
        String sql = "WITH running AS MATERIALIZED (SELECT run_id FROM " + table
                + "   WHERE status = 'running' AND run_id <> ?),"
                + " dead AS MATERIALIZED (SELECT run_id FROM running"
                + "   WHERE pg_try_advisory_xact_lock(?, " + key("run_id") + ")),"
                + " gone AS (UPDATE " + table + " r SET status = 'failed', finished_at = now(), error = ?"
                + "   FROM dead WHERE r.run_id = dead.run_id AND r.status = 'running' RETURNING r.run_id)"
                + cleared
                + " SELECT run_id FROM gone ORDER BY run_id";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setLong(1, self);
            ps.setInt(2, namespace(conn));
            ps.setString(3, ABANDONED + "; found by run " + self);
            List<Long> ids = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) ids.add(rs.getLong(1));
            }
            return ids;
        }
    }

    /** The advisory-lock namespace (first key) of this table's liveness locks in {@code conn}'s schema. */
    public int namespace(Connection conn) throws SQLException {
        return (namespacePrefix + conn.getSchema()).hashCode();
    }

    /** The liveness lock's second key, a non-negative int from the bigint run id. */
    private static String key(String runIdExpression) {
        return "(" + runIdExpression + " % 2147483648)::int";
    }
}
