package dev.recount.stream.sink;

import dev.recount.core.config.PostgresSettings;
import java.io.Serializable;
import java.util.Objects;

/**
 * Where the committer writes: the settings and the password. The password travels with the job graph (as with
 * Flink's JDBC connector), because the committer runs on a TaskManager that may not see the client's environment;
 * {@link #toString()} never shows it.
 */
public record PostgresTarget(PostgresSettings settings, String password) implements Serializable {
    public PostgresTarget {
        Objects.requireNonNull(settings, "settings");
    }

    @Override
    public String toString() {
        return "PostgresTarget{" + settings.jdbcUrl() + " user=" + settings.user() + " schema=" + settings.schema() + '}';
    }
}
