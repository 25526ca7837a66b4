package dev.recount.db;

import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.MetricSetRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies recount's Flyway migrations (db/migration) to one schema, then creates the objects of the metric sets the
 * definitions declare and records them ({@link MetricSetRegistry}). Safe to run on a migrated schema.
 */
public final class Migrations {
    /**
     * The highest version among this build's migrations: every component refuses a schema below it
     * ({@link Database#checkLogin}), because its code may need any of them. {@code SchemaVersionITCase} (module
     * local-stack) fails when a migration is added without raising this.
     */
    public static final int LATEST = 26;

    private Migrations() {}

    /** What {@link #apply(String, String, String, String, MetricSets)} did: Flyway's migrations, then the sets'. */
    public record Applied(MigrateResult flyway, MetricSetRegistry.Outcome sets) {}

    /**
     * Flyway's migrations, then, in one transaction, the objects and registry rows of {@code sets}
     * ({@link MetricSetRegistry#apply}).
     *
     * @param user must be able to create roles and schemas (an administrative user); the components
     *             themselves never need to
     * @throws dev.recount.core.config.ConfigException when a set's dimensions or measures changed in place (the
     *             Flyway migrations are applied all the same; no set's object or row is)
     */
    public static Applied apply(String jdbcUrl, String user, String password, String schema, MetricSets sets) {
        MigrateResult flyway = Flyway.configure()
                .dataSource(jdbcUrl, user, password)
                .schemas(schema)
                .defaultSchema(schema)
                .locations("classpath:db/migration")
                .failOnMissingLocations(true)
                .load()
                .migrate();
        try (Connection admin = DriverManager.getConnection(jdbcUrl, user, password)) {
            return new Applied(flyway, MetricSetRegistry.apply(admin, schema, sets));
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "creating the objects of the metric sets in schema " + schema + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * {@link #apply(String, String, String, String, MetricSets)} with the built-in definitions
     * ({@link MetricSets#defaults()}: the default set only). A set registered in the schema and not declared there is
     * marked removed (its tables stay).
     */
    public static MigrateResult apply(String jdbcUrl, String user, String password, String schema) {
        return apply(jdbcUrl, user, password, schema, MetricSets.defaults()).flyway();
    }
}
