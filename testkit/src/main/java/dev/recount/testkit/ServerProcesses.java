package dev.recount.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
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
