package dev.recount.db.tables;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * {@code window_corrections_writes} (V17): one row per statement that wrote {@code window_corrections}, appended by
 * that table's statement-level trigger. Its row count only grows while nothing writes {@code window_corrections}
 * stays the same: the reconciler compares it with the count it recorded to know that the finalized rows are as it
 * left them without reading them.
 */
public final class WindowCorrectionsWritesTable {
    private final String table;

    public WindowCorrectionsWritesTable(SetTables tables) {
        this.table = tables.windowCorrectionsWrites();
    }

    /** How many statements have written the set's window_corrections, as this transaction sees it (its own included). */
    public long count(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
