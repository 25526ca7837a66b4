package dev.recount.reconcile;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The advisory lock that serializes the reconciliations of one schema: two runs over overlapping ranges never
 * interleave, while runs of different schemas (environments, tests) never wait for each other. Session-scoped: closing
 * the connection (the pool evicts a broken one) releases it too.
 */
final class SchemaLock implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SchemaLock.class);
    /** How long a run waits for another run of the same schema to finish. */
    static final Duration TIMEOUT = Duration.ofMinutes(10);

    private final Connection conn;
    private final long key;

    private SchemaLock(Connection conn, long key) {
        this.conn = conn;
        this.key = key;
    }

    /** Waits up to {@link #TIMEOUT} for the schema's lock on {@code conn}. */
    static SchemaLock acquire(Connection conn) throws SQLException {
        long key;
        try (Statement st = conn.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT hashtextextended('recount.reconcile.' || current_schema(), 0)")) {
            rs.next();
            key = rs.getLong(1);
        }
        try (Statement st = conn.createStatement()) {
            st.execute("SET lock_timeout = '" + TIMEOUT.toMillis() + "ms'");
            try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_lock(?)")) {
                ps.setLong(1, key);
                ps.execute();
            } catch (SQLException e) {
                if ("55P03".equals(e.getSQLState())) {
                    throw new IllegalStateException(
                            "another reconciliation of this schema is still running after " + TIMEOUT.toMinutes()
                                    + " minutes; try again later",
                            e);
                }
                throw e;
            } finally {
                st.execute("RESET lock_timeout");
            }
        }
        return new SchemaLock(conn, key);
    }

    @Override
    public void close() {
        try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);
            ps.execute();
        } catch (SQLException e) {
            LOG.warn("could not release the reconcile lock: {}", e.getMessage());
        }
    }
}
