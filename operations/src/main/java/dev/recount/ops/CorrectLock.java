package dev.recount.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The PostgreSQL advisory lock that keeps two {@code correct} runs from overlapping (a scheduler firing while the
 * previous run still runs, or a manual run). A session lock on a connection of its own, held for the whole run and
 * released when closed, or by PostgreSQL when the process dies: a killed run never leaves it behind.
 *
 * <p>Key: the one-bigint form, hashed from the schema, so separate schemas (environments, tests) never block each
 * other; PostgreSQL keeps one-bigint keys apart from the two-int keys the backfill's own locks use.
 */
final class CorrectLock implements AutoCloseable {
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    private final Connection conn;
    private final long key;

    private CorrectLock(Connection conn, long key) {
        this.conn = conn;
        this.key = key;
    }

    static long key(String schema) {
        return ((long) "recount-correct".hashCode() << 32) | (schema.hashCode() & 0xffffffffL);
    }

    /**
     * Takes the lock, waiting up to {@code wait} (zero: not at all). Returns null when another run holds it.
     */
    static CorrectLock acquire(DataSource db, String schema, Duration wait) throws SQLException {
        long key = key(schema);
        Connection conn = db.getConnection();
        try {
            conn.setAutoCommit(true);
            boolean held;
            if (wait.isZero()) {
                try (PreparedStatement ps = conn.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
                    ps.setLong(1, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        held = rs.getBoolean(1);
                    }
                }
            } else {
                held = lockWaiting(conn, key, wait);
            }
            if (held) return new CorrectLock(conn, key);
            conn.close();
            return null;
        } catch (SQLException | RuntimeException e) {
            conn.close();
            throw e;
        }
    }

    private static boolean lockWaiting(Connection conn, long key, Duration wait) throws SQLException {
        try (Statement s = conn.createStatement()) {
            s.execute("SET lock_timeout = " + Math.max(1, wait.toMillis()));
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_lock(?)")) {
            ps.setLong(1, key);
            ps.execute();
            return true;
        } catch (SQLException e) {
            if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) return false;
            throw e;
        } finally {
            try (Statement s = conn.createStatement()) {
                s.execute("RESET lock_timeout");
            }
        }
    }

    @Override
    public void close() throws SQLException {
        try (conn;
                PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);
            ps.execute();
        }
    }
}
