package dev.recount.db.tables;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.TreeSet;

/**
 * {@code window_writes} (V21; every set has its own): which windows a committed transaction wrote in {@code stream_window_metrics} or
 * {@code batch_window_metrics} since the reconciliation that last recorded them. The stream's committer and the
 * batch's replace log their windows themselves, once per window and transaction ({@link #markLogged} then
 * {@link #log}); every other write is logged row by row by the tables' triggers. The reconciler deletes the rows of
 * the windows it records, in the snapshot it read them in.
 */
public final class WindowWritesTable {
    /** The default set's table; {@link #table()} is this instance's. */
    public static final String TABLE = "window_writes";

    /** The side a row of {@code window_writes} names. */
    public enum Side {
        STREAM,
        BATCH;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * The setting (transaction-local) by which a writer tells the tables' triggers that it logs its windows itself:
     * with it on, they do not log its rows one by one.
     */
    static final String LOGGED_SETTING = "recount.window_writes_logged";

    private final String table;

    public WindowWritesTable(SetTables tables) {
        this.table = tables.windowWrites();
    }

    public String table() {
        return table;
    }

    /**
     * Says, for the rest of {@code conn}'s transaction, that the transaction logs the windows it writes itself: call
     * {@link #log} with them before committing. Outside a transaction it would last one statement.
     */
    public static void markLogged(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("SET LOCAL " + LOGGED_SETTING + " = 'on'");
        }
    }

    /**
     * The statement (or CTE body) that logs each window of {@code relation}'s {@code window_start} column once:
     * "INSERT INTO window_writes ... SELECT DISTINCT ... FROM relation", for the caller to append a WHERE to.
     */
    public String logWindowsOf(Side side, String relation) {
        return "INSERT INTO " + table + " (side, window_start) SELECT DISTINCT '" + side.wireName()
                + "', window_start FROM " + relation;
    }

    /** Logs that this transaction wrote rows of the windows starting at {@code windowStartsMillis} (each once). */
    public void log(Connection conn, Side side, Collection<Long> windowStartsMillis) throws SQLException {
        TreeSet<Long> distinct = new TreeSet<>(windowStartsMillis);
        if (distinct.isEmpty()) return;
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO " + table + " (side, window_start) SELECT ?, unnest(?::timestamptz[])")) {
            ps.setString(1, side.wireName());
            ps.setArray(2, Timestamps.array(conn, distinct));
            ps.executeUpdate();
        }
    }
}
