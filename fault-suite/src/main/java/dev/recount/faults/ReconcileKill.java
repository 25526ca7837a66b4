package dev.recount.faults;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * kill -9 of `reconcile` in the middle of its run, then the same command again: the killed run must have changed
 * nothing served (its transaction never committed), and the rerun must mark it failed.
 */
final class ReconcileKill {
    private ReconcileKill() {}

    static int kill(Pipeline pipeline, OutputReader reader, Sent sent, Range range, Observations seen)
            throws Exception {
        String servedBefore = reader.servedSnapshot(sent);
        Instant killed;
        boolean wasRunning;
        // The correction log held (SHARE: reads go on, inserts wait) so that the run stops at its log entries, with
        // everything before them done in its transaction, and the kill lands in the middle of it however fast the
        // machine is. Waiting for the run's row instead let a run of this size finish between two polls.
        try (Connection holder = pipeline.connection()) {
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("LOCK TABLE correction_log IN SHARE MODE");
            }
            Process reconcile = pipeline.startReconcile(range.from(), range.to());
            Poll.until(
                    Duration.ofMinutes(2),
                    "reconcile to wait for the correction log",
                    () -> waitsForCorrectionLog(pipeline) || !reconcile.isAlive());
            killed = Instant.now();
            wasRunning = reconcile.isAlive();
            reconcile.destroyForcibly();
            reconcile.waitFor(1, TimeUnit.MINUTES);
            holder.rollback();
        }
        seen.notes.add("reconcile killed " + (wasRunning ? "while it waited to write its log entries" : "too late"));
        if (!wasRunning) seen.problems.add("reconcile ended before it was killed: the fault was not injected");
        if (!servedBefore.equals(reader.servedSnapshot(sent)))
            seen.problems.add("the killed reconcile changed the served numbers");
        int again = pipeline.reconcile(range.from(), range.to());
        seen.recoveries.add(Duration.between(killed, Instant.now()));
        long failed = count(
                pipeline,
                "SELECT count(*) FROM reconciliation_runs WHERE status = 'failed' AND error LIKE 'abandoned%'");
        long running = count(pipeline, "SELECT count(*) FROM reconciliation_runs WHERE status = 'running'");
        seen.notes.add(
                "rerun exited " + again + "; killed runs marked failed: " + failed + ", still running: " + running);
        if (wasRunning && (failed != 1 || running != 0)) {
            seen.problems.add(
                    "the killed reconcile run is not marked failed (failed " + failed + ", running " + running + ")");
        }
        return 1;
    }

    /** Whether a session waits for a lock on the default set's {@code correction_log}. */
    private static boolean waitsForCorrectionLog(Pipeline pipeline) throws Exception {
        return count(
                        pipeline,
                        "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'correction_log'::regclass")
                > 0;
    }

    private static long count(Pipeline pipeline, String sql) throws Exception {
        try (Connection c = pipeline.connection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
