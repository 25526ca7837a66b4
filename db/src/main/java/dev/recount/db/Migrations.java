package dev.recount.db;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/** Applies recount's Flyway migrations (db/migration) to one schema. Safe to run on a migrated schema. */
public final class Migrations {
    /**
     * The highest version among this build's migrations: every component refuses a schema below it
     * ({@link Database#checkLogin}), because its code may need any of them. {@code SchemaVersionITCase} (module
     * local-stack) fails when a migration is added without raising this.
     */
    public static final int LATEST = 25;

    private Migrations() {}

    /**
     * @param user must be able to create roles and schemas (an administrative user); the components
     *             themselves never need to
     */
    public static MigrateResult apply(String jdbcUrl, String user, String password, String schema) {
        return Flyway.configure()
                .dataSource(jdbcUrl, user, password)
                .schemas(schema)
                .defaultSchema(schema)
                .locations("classpath:db/migration")
                .failOnMissingLocations(true)
                .load()
                .migrate();
    }
}
