package dev.recount.reconcile.testutils;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Everything a reconciliation may change that finance sees of one metric set, fingerprinted exactly: every row of its
 * serving view {@code window_metrics}, of its {@code window_corrections} (with its run ids and {@code finalized_at}) and of
 * {@code correction_log}, each as the md5 of all its rows' text in key order, with the row counts. Two equal
 * states hold exactly the same rows.
 */
public record ServedState(
        long viewRows, String view, long correctionRows, String corrections, long logRows, String log) {

    /** The default set's. */
    public static ServedState read(Connection c) throws SQLException {
        return read(c, new SetTables(ReconcileDb.DEFAULT));
    }

    /** The metric set's of {@code tables}. */
    public static ServedState read(Connection c, SetTables tables) throws SQLException {
        String[] view = digest(c, tables.windowMetrics(), tables.keyColumns());
        String[] corrections = digest(c, tables.windowCorrections(), tables.keyColumns());
        String[] log = digest(c, tables.correctionLog(), "log_id");
        return new ServedState(
                Long.parseLong(view[0]),
                view[1],
                Long.parseLong(corrections[0]),
                corrections[1],
                Long.parseLong(log[0]),
                log[1]);
    }

    private static String[] digest(Connection c, String table, String order) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*)," + " coalesce(md5(string_agg(t::text, E'\\n' ORDER BY "
                        + order + ")), '-') FROM " + table + " t")) {
            rs.next();
            return new String[] {String.valueOf(rs.getLong(1)), rs.getString(2)};
        }
    }
}
