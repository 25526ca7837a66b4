package dev.recount.db;

import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;

/** A schema migrated up to a given version (to test what a later migration does to it), and reading it as admin. */
final class MigratedSchemas {
    private MigratedSchemas() {}

    /** Migrates {@code schema} up to {@code target} (a version, e.g. "20"), or to the latest when null. */
    static void migrate(LocalStack stack, String schema, String target) {
        var config = Flyway.configure()
                .dataSource(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword())
                .schemas(schema)
                .defaultSchema(schema)
                .locations("classpath:db/migration")
                .failOnMissingLocations(true);
        if (target != null) config = config.target(target);
        config.load().migrate();
    }

    static Connection admin(LocalStack stack, String schema) throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    static long count(Connection c, String sql) throws SQLException {
        return Long.parseLong(text(c, sql));
    }

    /** The first column of the first row of {@code sql}. */
    static String text(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
