package dev.recount.tools.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.db.Migrations;
import dev.recount.testkit.LocalStack;
import dev.recount.tools.CommandRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./recount migrate} on a real PostgreSQL, as a user's own database would be: an empty schema, then a rerun. */
class MigrateCommandITCase {
    static LocalStack stack;

    @TempDir
    Path dir;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    /** The settings a user writes for their own database: URL, schema, administrative login, its password file. */
    private Path config(String schema) throws Exception {
        Path password = dir.resolve("admin.password");
        Files.writeString(password, stack.adminPassword() + "\n");
        Path config = dir.resolve("recount.properties");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "postgres.jdbc-url=" + stack.jdbcUrl(),
                        "postgres.schema=" + schema,
                        "postgres.user=" + stack.adminUser(),
                        // a variable no environment sets, so the password comes from the file whatever the test's
                        // environment
                        "postgres.password-env=RECOUNT_MIGRATE_ITCASE_UNSET",
                        "postgres.password-file=" + password,
                        ""));
        return config;
    }

    @Test
    void appliesEveryMigrationToAnEmptySchemaThenNothing() throws Exception {
        String schema = stack.createSchema("migrate");
        Path config = config(schema);

        CommandRun first = CommandRun.of("migrate", "--config", config.toString());
        assertThat(first.exitCode()).as(first.err()).isZero();
        int latest = latestVersion(schema);
        // Version numbers may have gaps (a number reserved by work not merged yet): count what was applied.
        assertThat(first.out())
                .contains("migrate: schema " + schema + " on " + stack.jdbcUrl())
                .contains("migrate: applied " + appliedCount(schema) + " (V1 roles, V2 stream tables")
                .contains("the schema is at version " + latest);

        CommandRun again = CommandRun.of("migrate", "--config", config.toString());
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("migrate: nothing to apply; the schema is at version " + latest);
    }

    /** A newer recount migrated the schema (a rollback of the jars): nothing to apply, and the output says so. */
    @Test
    void saysWhenTheSchemaIsNewerThanThisBuild() throws Exception {
        String schema = stack.createSchema("migrate");
        Path config = config(schema);
        assertThat(CommandRun.of("migrate", "--config", config.toString()).exitCode())
                .isZero();
        int future = Migrations.LATEST + 1;
        stack.recordMigrationOfANewerBuild(schema, String.valueOf(future));

        CommandRun run = CommandRun.of("migrate", "--config", config.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("migrate: nothing to apply; the schema is at version " + future
                        + ", newer than this build's last migration (V" + Migrations.LATEST + ")");
    }

    /**
     * The sets of metric-sets.file get their objects and their registry rows; a set whose measures changed is refused
     * with exit 2 and one line saying what to do, and nothing of it is written.
     */
    @Test
    void createsTheDeclaredSetsAndRefusesAChangeInPlace() throws Exception {
        String schema = stack.createSchema("migrate");
        Path sets = dir.resolve("sets.yaml");
        String declared = String.join(
                "\n",
                "version: 1",
                "attributes:",
                "  slot_id: {type: string, default: none}",
                "sets:",
                "  - name: default",
                "  - name: campaign_slot",
                "    dimensions: [campaign_id, slot_id]",
                "    measures:",
                "      - {name: clicks, kind: count, where: {event_type: click}}",
                "");
        Files.writeString(sets, declared);
        Path config = config(schema);
        Files.writeString(config, Files.readString(config) + "metric-sets.file=" + sets + "\n");

        CommandRun first = CommandRun.of("migrate", "--config", config.toString());
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out())
                .contains("migrate: metric sets of " + sets + ": created default; created campaign_slot");

        Files.writeString(sets, declared.replace("event_type: click", "event_type: [click, conversion]"));
        CommandRun changed = CommandRun.of("migrate", "--config", config.toString());
        assertThat(changed.exitCode()).as(changed.err()).isEqualTo(2);
        assertThat(changed.errIsOneLine()).as(changed.err()).isTrue();
        assertThat(changed.err())
                .startsWith("recount migrate: metric set campaign_slot cannot change in place: its measures: clicks"
                        + " from (count where event_type in [click]) to (count where event_type in [click,"
                        + " conversion])")
                .contains("./recount backfill range --set <new name>");
        try (Connection c = stack.adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT definition->'measures'->0->'where'->>'event_type' FROM " + schema
                        + ".metric_sets WHERE name = 'campaign_slot'")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("[\"click\"]");
        }
    }

    /**
     * A definitions file that breaks a rule stops migrate before it touches the database: exit 2, one line naming the
     * file, the line and the rule, and not even the migration history is created.
     */
    @Test
    void aBadDefinitionsFileIsRefusedBeforeAnythingIsWritten() throws Exception {
        String schema = stack.createSchema("migrate");
        Path sets = dir.resolve("bad-sets.yaml");
        Files.writeString(
                sets,
                String.join(
                        "\n",
                        "version: 1",
                        "sets:",
                        "  - name: by_slot",
                        "    dimensions: [campaign_id, slot_id]",
                        "    measures:",
                        "      - {name: clicks, kind: count, where: {event_type: click}}",
                        ""));
        Path config = config(schema);
        Files.writeString(config, Files.readString(config) + "metric-sets.file=" + sets + "\n");

        CommandRun run = CommandRun.of("migrate", "--config", config.toString());
        assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).contains(sets + ":4").contains("slot_id");
        try (Connection c = stack.adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_tables WHERE schemaname = '" + schema + "'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("tables in " + schema).isZero();
        }
    }

    @Test
    void aWrongPasswordFailsWithOneLine() throws Exception {
        String schema = stack.createSchema("migrate");
        Path config = config(schema);
        Files.writeString(dir.resolve("admin.password"), "not-the-password\n");

        CommandRun run = CommandRun.of("migrate", "--config", config.toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).startsWith("recount migrate: ");
    }

    private int appliedCount(String schema) throws Exception {
        try (Connection c = stack.adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + schema + ".flyway_schema_history"
                        + " WHERE success AND version IS NOT NULL")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private int latestVersion(String schema) throws Exception {
        try (Connection c = stack.adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT max(version::int) FROM " + schema + ".flyway_schema_history WHERE success")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
