package dev.recount.stream.sink;

import dev.recount.core.config.PasswordSource;
import dev.recount.core.config.PostgresSettings;
import java.io.Serializable;
import java.util.Objects;

/**
 * Where the committer writes: the stream's own login and schema, and where its password comes from. The password
 * itself is not in here and so never in the job graph (unlike Flink's JDBC connector, which ships it): it is read
 * from the TaskManager's own environment variable or file when the committer opens its pool, which also picks up a
 * rotated password at the next restart.
 */
public record PostgresTarget(PostgresSettings settings, PasswordSource passwordSource) implements Serializable {
    private static final long serialVersionUID = 1L;

    public PostgresTarget {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(passwordSource, "passwordSource");
    }

    /** The password, resolved now, where this runs; null when none is configured (trust or peer authentication). */
    public String password() {
        return passwordSource.resolve();
    }

    @Override
    public String toString() {
        return "PostgresTarget{" + settings.jdbcUrl() + " user=" + settings.user() + " schema=" + settings.schema()
                + " password from " + passwordSource + '}';
    }
}
