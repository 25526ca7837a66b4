package dev.recount.testkit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * The PostgreSQL server process behind a session. Closing a JDBC connection ends its server process a moment later,
 * not at once, and only then are the session's locks (a run's liveness lock) released: a test that simulates a dead
 * process by closing its connection waits for that before it expects the next run to see the process gone.
 */
public final class ServerProcesses {
    private ServerProcesses() {}

    /** The pid of {@code session}'s server process. */
    public static int of(Connection session) throws SQLException {
        try (Statement st = session.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * The server processes waiting for a lock that {@code holder}'s session holds, in pid order: how a test that
     * stops a process at a lock it holds sees that the process got there. {@code locktype} (pg_locks' column:
     * relation, transactionid, advisory…) narrows it to one kind of lock; null for any.
     */
    public static List<Integer> waitingFor(Connection holder, String locktype) throws SQLException {
        List<Integer> pids = new ArrayList<>();
        try (PreparedStatement ps = holder.prepareStatement("SELECT DISTINCT pid FROM pg_locks WHERE NOT granted"
                + " AND (?::text IS NULL OR locktype = ?) AND pg_backend_pid() = ANY (pg_blocking_pids(pid))"
                + " ORDER BY pid")) {
            ps.setString(1, locktype);
            ps.setString(2, locktype);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) pids.add(rs.getInt(1));
            }
        }
        return pids;
    }

    /** The first of {@link #waitingFor(Connection, String)} for any lock, if any waits. */
    public static Optional<Integer> firstWaitingFor(Connection holder) throws SQLException {
        return waitingFor(holder, null).stream().findFirst();
    }

    /** Polls, each time on a new connection from {@code connect}, until server process {@code pid} is gone. */
    public static void awaitEnded(Callable<Connection> connect, int pid, Duration timeout) {
        Poll.until(timeout, "server process " + pid + " to end", () -> {
            // A new session each time: pg_stat_activity is a snapshot per transaction.
            try (Connection c = connect.call();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid)) {
                rs.next();
                return rs.getLong(1) == 0;
            }
        });
    }
}
