package dev.recount.batch;

import dev.recount.core.config.Durations;
import dev.recount.core.time.Deadline;
import dev.recount.core.window.WindowAlignment;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL advisory locks that keep backfills over overlapping ranges from running at once. Held on the
 * run's own connection (session locks survive its commits) from before the lake is read until after the
 * result is committed: a run that waited then reads the lake afresh, so an older computation can never
 * overwrite a newer one.
 *
 * <p>Granularity: one lock per UTC day that the run's window starts fall in, keyed {@code (hash of
 * "recount-batch:" + schema, epoch day)}. Two runs whose window sets intersect share at least one day, so they
 * serialise; runs on different days (a nightly and a manual recompute of last week) proceed side by side. A
 * single global lock would be simpler but would make every backfill wait for the longest one. Every run first
 * takes a global lock in shared mode and then its days in ascending order, so no two runs can wait for each
 * other in a cycle. A run touching more than {@link #MAX_DAY_LOCKS} days takes the global lock exclusively
 * instead, which bounds the lock-table entries one run needs (PostgreSQL's lock table is small and shared).
 * {@code affected} runs also hold one more lock first, so only one run at a time consumes the backfill topic.
 *
 * <p>Waiting is bounded by {@code batch.lock-timeout} per acquisition step, via PostgreSQL's
 * {@code lock_timeout}; on timeout the run fails with {@link dev.recount.core.cli.ExitCode#BUSY}.
 */
final class RunLocks implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RunLocks.class);
    static final int MAX_DAY_LOCKS = 31;
    static final int GLOBAL_KEY = Integer.MIN_VALUE;
    static final int AFFECTED_KEY = Integer.MIN_VALUE + 1;
    private static final long DAY_MILLIS = 86_400_000L;
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    /** One advisory lock to take: {@code pg_advisory_lock[_shared](namespace, key)}. */
    record LockRequest(int key, boolean shared, String what) {}

    private final Connection conn;
    private final int namespace;
    private final Duration timeout;

    private RunLocks(Connection conn, int namespace, Duration timeout) {
        this.conn = conn;
        this.namespace = namespace;
        this.timeout = timeout;
    }

    static RunLocks on(Connection conn, String schema, Duration timeout) {
        return new RunLocks(conn, namespace(schema), timeout);
    }

    /** Separate schemas (environments, tests) sharing one database never block each other. */
    static int namespace(String schema) {
        return ("recount-batch:" + schema).hashCode();
    }

    static int dayKey(long epochDay) {
        return Math.toIntExact(epochDay);
    }

    void lockBackfillTopic() throws SQLException {
        acquire(List.of(new LockRequest(AFFECTED_KEY, false, "the backfill topic (another `affected` run)")));
    }

    void lockRange(TimeRange range, WindowAlignment windows) throws SQLException {
        long firstDay = Math.floorDiv(range.fromMillis(), DAY_MILLIS);
        long lastDay = Math.floorDiv(range.toMillis() - windows.sizeMillis(), DAY_MILLIS);
        acquire(plan(firstDay, lastDay, null));
    }

    void lockWindows(Collection<Long> windowStarts) throws SQLException {
        if (windowStarts.isEmpty()) return;
        TreeSet<Long> days = new TreeSet<>();
        for (long start : windowStarts) days.add(Math.floorDiv(start, DAY_MILLIS));
        acquire(plan(days.first(), days.last(), days));
    }

    /** The locks for window starts on UTC days {@code days} (or every day {@code firstDay..lastDay} when null). */
    static List<LockRequest> plan(long firstDay, long lastDay, SortedSet<Long> days) {
        long count = days != null ? days.size() : lastDay - firstDay + 1;
        List<LockRequest> locks = new ArrayList<>();
        if (count > MAX_DAY_LOCKS) {
            locks.add(new LockRequest(GLOBAL_KEY, false, "every day (this run spans " + count + " days)"));
            return locks;
        }
        locks.add(new LockRequest(GLOBAL_KEY, true, "a run spanning more than " + MAX_DAY_LOCKS + " days"));
        Iterable<Long> each = days != null
                ? days
                : () -> java.util.stream.LongStream.rangeClosed(firstDay, lastDay)
                        .iterator();
        for (long day : each) {
            locks.add(new LockRequest(dayKey(day), false, "UTC day " + LocalDate.ofEpochDay(day)));
        }
        return locks;
    }

    private void acquire(List<LockRequest> requests) throws SQLException {
        // One batch.lock-timeout for all of them: each waits for what is left of it (PostgreSQL does the waiting).
        Deadline deadline = Deadline.after(timeout);
        for (LockRequest r : requests) {
            if (tryLock(r)) continue;
            LOG.info("waiting up to {} for another backfill holding {}", Durations.format(timeout), r.what());
            long remainingMillis = deadline.remaining(Duration.ofMillis(1)).toMillis();
            try (Statement s = conn.createStatement()) {
                s.execute("SET lock_timeout = " + remainingMillis);
            }
            try (PreparedStatement ps = conn.prepareStatement(
                    "SELECT " + (r.shared() ? "pg_advisory_lock_shared" : "pg_advisory_lock") + "(?, ?)")) {
                ps.setInt(1, namespace);
                ps.setInt(2, r.key());
                ps.execute();
            } catch (SQLException e) {
                if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    throw BackfillException.lockTimeout(
                            "another backfill holds an overlapping range (" + r.what() + "); gave up after "
                                    + Durations.format(timeout) + " (batch.lock-timeout)",
                            e);
                }
                throw e;
            } finally {
                try (Statement s = conn.createStatement()) {
                    s.execute("SET lock_timeout TO DEFAULT");
                }
            }
        }
    }

    private boolean tryLock(LockRequest r) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT " + (r.shared() ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock") + "(?, ?)")) {
            ps.setInt(1, namespace);
            ps.setInt(2, r.key());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Releases every lock of this session, so the pooled connection goes back clean: the range locks and the
     * run's liveness lock ({@code BatchRunsTable.start}), which is why this runs even if no range lock was taken.
     */
    @Override
    public void close() {
        try (Statement s = conn.createStatement()) {
            s.execute("SELECT pg_advisory_unlock_all()");
        } catch (SQLException e) {
            // The locks end with the session anyway; a broken connection is evicted by the pool.
            LOG.warn("releasing backfill locks failed: {}", e.getMessage());
        }
    }
}
