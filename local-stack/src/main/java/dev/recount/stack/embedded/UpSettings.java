package dev.recount.stack.embedded;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.config.Topics;
import dev.recount.core.sets.MetricSets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code up} needs from the configuration.
 *
 * @param kafkaPort    0 = reuse the previous run's port if free, else pick a free one
 * @param postgresPort likewise
 * @param adminUser    the cluster's superuser, used only when the cluster is first created
 * @param database     the database to create; its name comes from {@code postgres.jdbc-url}
 * @param schema       where the migrations go ({@code postgres.schema})
 * @param metricSets   the definitions whose sets' objects {@code up} creates ({@code metric-sets.file})
 * @param timeout      how long up waits for both services to answer
 */
public record UpSettings(
        int kafkaPort,
        int postgresPort,
        Topics topics,
        String adminUser,
        String database,
        String schema,
        MetricSets metricSets,
        Duration timeout) {
    private static final Pattern DATABASE = Pattern.compile("^jdbc:postgresql://[^/]*/([^?;/]+)");

    public static UpSettings from(RecountConfig config, Duration timeout) {
        return new UpSettings(
                config.integer("local.kafka-port"),
                config.integer("local.postgres-port"),
                config.topics(),
                config.get("postgres.user"),
                databaseOf(config.get("postgres.jdbc-url")),
                config.adminPostgres().schema(),
                MetricSets.fromConfig(config),
                timeout);
    }

    /** The database name in a PostgreSQL JDBC URL; {@code recount} when the URL names none. */
    static String databaseOf(String jdbcUrl) {
        Matcher m = DATABASE.matcher(jdbcUrl);
        return m.find() ? m.group(1) : "recount";
    }
}
