package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A component refuses a schema older than its build, with a message that says what to run, and works on a schema
 * migrated by its build or a newer one. Each component's pool and the stream's pre-flight check log in through
 * {@link Database#checkLogin}'s statement, so one pool stands for all of them.
 */
class SchemaVersionITCase {
    static LocalStack stack;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    @Test
    void aSchemaMigratedByThisBuildIsAtItsLatestVersion() throws SQLException {
        String schema = stack.createMigratedSchema("version");
        try (Connection c = stack.loginConnection(schema, Role.FINANCE)) {
            assertThat(MigratedSchemas.count(c, "SELECT " + schema + ".schema_version()"))
                    .as("Migrations.LATEST must be the highest migration of db/migration")
                    .isEqualTo(Migrations.LATEST);
        }
    }

    @Test
    void aComponentRefusesASchemaWithoutTheVersionFunctionAndWorksOnceMigrated() throws SQLException {
        String schema = stack.createSchema("version");
        MigratedSchemas.migrate(stack, schema, "22");
        try (Connection c = stack.adminConnection()) {
            Logins.ensureLocal(c, schema, stack.passwordDir());
        }

        assertThatThrownBy(() -> pool(schema, Role.RECONCILER).close())
                .hasStackTraceContaining("recount: schema " + schema + " is older than this build, which needs version "
                        + Migrations.LATEST + ": apply this build's migrations first (./recount migrate");

        MigratedSchemas.migrate(stack, schema, null);
        assertWorks(schema, Role.RECONCILER);
    }

    @Test
    void aComponentRefusesASchemaBelowItsVersionAndAcceptsANewerOne() throws SQLException {
        String schema = stack.createMigratedSchema("version");
        // As if this build needed a migration the schema lacks: the history's last version is taken away.
        int below = Migrations.LATEST - 1;
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement s = c.createStatement()) {
            s.execute("UPDATE flyway_schema_history SET success = false WHERE version::int > " + below);
        }
        assertThatThrownBy(() -> pool(schema, Role.STREAM).close())
                .hasStackTraceContaining("recount: schema " + schema + " is at version " + below
                        + ", older than this build, which needs version " + Migrations.LATEST);

        // A newer build's migration on top, even one with a version that is no integer: accepted.
        String newer = (Migrations.LATEST + 1) + ".1";
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement s = c.createStatement()) {
            s.execute("UPDATE flyway_schema_history SET success = true");
        }
        stack.recordMigrationOfANewerBuild(schema, newer);
        assertWorks(schema, Role.STREAM);
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            assertThat(MigratedSchemas.count(c, "SELECT " + schema + ".schema_version()"))
                    .isEqualTo(Migrations.LATEST + 1);
        }
    }

    /**
     * A component's connection asks the server to notice within 2 s that its process is gone, and within about a
     * minute that its machine is (TCP keepalives); where the server refuses a setting (any check interval but 0 on a
     * platform that cannot tell a closed socket, or a managed service), the connection still works, with a warning
     * saying why.
     */
    @Test
    void aComponentsConnectionChecksItsClientAndWorksWhereTheServerRefusesTheSetting() throws SQLException {
        String schema = stack.createMigratedSchema("version");
        try (HikariDataSource pool = pool(schema, Role.BATCH);
                Connection c = pool.getConnection()) {
            assertThat(setting(c)).isEqualTo(Database.CLIENT_CHECK_INTERVAL);
            assertThat(keepalives(c))
                    .as("the server's TCP keepalives on this (TCP) connection")
                    .isEqualTo(Stream.of(
                                    Database.TcpSettings.DEFAULT.idleSeconds(),
                                    Database.TcpSettings.DEFAULT.intervalSeconds(),
                                    Database.TcpSettings.DEFAULT.count(),
                                    Database.TcpSettings.DEFAULT.userTimeoutMillis())
                            .map(String::valueOf)
                            .toList());
        }
        try (Connection c = stack.loginConnection(schema, Role.BATCH);
                Statement s = c.createStatement()) {
            String before = keepalives(c).get(0);
            s.execute(Database.checkClient(
                    "-1", new Database.TcpSettings(-1, -1, -1, -1))); // refused by the server, as on such a platform
            List<String> warnings = new ArrayList<>();
            for (java.sql.SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning())
                warnings.add(w.getMessage());
            assertThat(warnings)
                    .anySatisfy(w -> assertThat(w).contains("recount: client_connection_check_interval not set: "))
                    .anySatisfy(w -> assertThat(w).contains("recount: TCP keepalives not set: "));
            assertThat(setting(c)).isEqualTo("0");
            assertThat(keepalives(c).get(0)).isEqualTo(before);
            assertThat(MigratedSchemas.count(c, "SELECT 1")).isEqualTo(1);
        }
    }

    private static String setting(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SHOW client_connection_check_interval")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static List<String> keepalives(Connection c) throws SQLException {
        List<String> values = new ArrayList<>();
        for (String name :
                List.of("tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout")) {
            try (Statement s = c.createStatement();
                    java.sql.ResultSet rs = s.executeQuery("SHOW " + name)) {
                rs.next();
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    private static HikariDataSource pool(String schema, Role role) {
        String login = role.loginName(schema);
        return Database.pool(new PostgresSettings(stack.jdbcUrl(), login, schema, 1), stack.password(login), role);
    }

    private static void assertWorks(String schema, Role role) throws SQLException {
        try (HikariDataSource pool = pool(schema, role);
                Connection c = pool.getConnection()) {
            assertThat(MigratedSchemas.count(c, "SELECT 1")).isEqualTo(1);
        }
    }
}
