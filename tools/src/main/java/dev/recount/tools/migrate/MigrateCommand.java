package dev.recount.tools.migrate;

import dev.recount.core.config.PostgresSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Migrations;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.flywaydb.core.api.output.MigrateOutput;
import org.flywaydb.core.api.output.MigrateResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./recount migrate}: recount's schema on a PostgreSQL of the user's own (the local stack's {@code up} does
 * this itself), as the administrative login of the settings, and what Flyway did.
 */
@Command(
        name = "migrate",
        sortOptions = false,
        description = {
            "Apply recount's schema migrations to postgres.schema on postgres.jdbc-url, as the administrative"
                    + " login (postgres.user; its password from postgres.password-env or postgres.password-file), and print"
                    + " the versions applied and the schema's version now.",
            "Then creates the objects of every metric set of metric-sets.file that has none yet (<set>__..., the"
                    + " default set's are the migrations'), re-creates each set's serving view and rollups, records"
                    + " the sets in metric_sets, and marks the sets the file no longer declares as removed (their"
                    + " tables stay). A set whose dimensions or measures changed is refused (exit 2): declare it"
                    + " under a new name.",
            "Safe to rerun: a migrated schema is left as it is. The migrations create the schema's group roles;"
                    + " the components' logins are yours to create (docs/operations.md)."
        })
public final class MigrateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file over the built-in defaults (default: $RECOUNT_CONFIG if set).")
    Path configFile;

    @Override
    public Integer call() {
        RecountConfig config = RecountConfig.fromEnvironment(configFile);
        PostgresSettings admin = config.adminPostgres();
        String password = config.adminPassword();
        // Read before anything is written: a bad definitions file stops migrate with nothing applied.
        MetricSets sets = MetricSets.fromConfig(config);
        PrintWriter out = spec.commandLine().getOut();
        out.println("migrate: schema " + admin.schema() + " on " + admin.jdbcUrl() + " as " + admin.user());
        Migrations.Applied applied = Migrations.apply(admin.jdbcUrl(), admin.user(), password, admin.schema(), sets);
        out.println(summary(applied.flyway()));
        out.println("migrate: metric sets of " + sets.source() + ": "
                + applied.sets().summary());
        return 0;
    }

    /** A version's leading integer (24 of "24.1"), as V23's schema_version() reads it. */
    private static final Pattern LEADING_INTEGER = Pattern.compile("[0-9]{1,9}");

    /**
     * What Flyway did, for people: the versions applied (or none) and the schema's version now, and whether a newer
     * build migrated it beyond this build's last migration (Flyway ignores such versions; this build runs on it).
     */
    static String summary(MigrateResult result) {
        String now = result.targetSchemaVersion != null ? result.targetSchemaVersion : result.initialSchemaVersion;
        String version = now == null ? "no version" : "version " + now;
        Matcher major = now == null ? null : LEADING_INTEGER.matcher(now);
        if (major != null && major.lookingAt() && Integer.parseInt(major.group()) > Migrations.LATEST) {
            version += ", newer than this build's last migration (V" + Migrations.LATEST + "): a newer recount"
                    + " migrated it";
        }
        if (result.migrationsExecuted == 0 || result.migrations == null || result.migrations.isEmpty()) {
            return "migrate: nothing to apply; the schema is at " + version;
        }
        String applied =
                result.migrations.stream().map(MigrateCommand::describe).collect(Collectors.joining(", "));
        return "migrate: applied " + result.migrationsExecuted + " (" + applied + "); the schema is at " + version;
    }

    private static String describe(MigrateOutput m) {
        return (m.version == null || m.version.isBlank() ? "repeatable" : "V" + m.version) + " " + m.description;
    }
}
