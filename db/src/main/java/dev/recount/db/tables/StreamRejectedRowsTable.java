package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code stream_rejected_rows}: window results PostgreSQL refused for their content. Each is recorded once (by its
 * {@code row_key}) in the transaction that commits the other rows, then published to the dead-letter topic in
 * {@code rejection_id} order.
 *
 * <p>Writers and the publisher serialize on {@link #lock} (a transaction-level advisory lock), so rejection ids
 * become visible in the order they were assigned and "everything after id n" is a complete set.
 */
public final class StreamRejectedRowsTable {
    public static final String TABLE = "stream_rejected_rows";

    /** A refused row as stored. */
    public record Rejected(long rejectionId, String rowJson, String sqlState, String error) {}

    private StreamRejectedRowsTable() {}

    /** Takes the table's transaction-level advisory lock (per schema: the key is derived from the table's oid). */
    public static void lock(Connection conn) throws SQLException {
        try (Statement s = conn.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + identitySql() + "::bigint)");
        }
    }

    /**
     * Identifies this table instance: its oid changes when the schema is dropped and created again (the demo does),
     * so a publication marker of an earlier instance is never mistaken for this one's.
     */
    public static String identity(Connection conn) throws SQLException {
        try (Statement s = conn.createStatement();
                ResultSet rs = s.executeQuery("SELECT " + identitySql())) {
            rs.next();
            return TABLE + "@" + rs.getLong(1);
        }
    }

    private static String identitySql() {
        return "to_regclass('" + TABLE + "')::oid";
    }

    /** Records a refused row unless it is recorded already; true when it is new. The caller holds {@link #lock}. */
    public static boolean insert(Connection conn, String rowKey, String rowJson, String sqlState, String error)
            throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + TABLE
                + " (row_key, row_json, sql_state, error) VALUES (?, ?, ?, ?) ON CONFLICT (row_key) DO NOTHING")) {
            ps.setString(1, rowKey);
            ps.setString(2, rowJson);
            ps.setString(3, sqlState);
            ps.setString(4, error);
            return ps.executeUpdate() == 1;
        }
    }

    /** Refused rows with an id above {@code afterId}, in id order. */
    public static List<Rejected> after(Connection conn, long afterId) throws SQLException {
        List<Rejected> rows = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT rejection_id, row_json, sql_state, error FROM "
                + TABLE + " WHERE rejection_id > ? ORDER BY rejection_id")) {
            ps.setLong(1, afterId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next())
                    rows.add(new Rejected(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)));
            }
        }
        return rows;
    }
}
