package dev.recount.stream.sink;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PasswordSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.db.Database;
import dev.recount.db.Role;
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
    /** Timeouts of the commit connections (pgjdbc URL parameters, seconds): a frozen server must fail a commit. */
    static final String CONNECTION_OPTIONS = "connectTimeout=10&loginTimeout=15&socketTimeout=60&tcpKeepAlive=true";

    public PostgresTarget {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(passwordSource, "passwordSource");
    }

    /** The password, resolved now, where this runs; null when none is configured (trust or peer authentication). */
    public String password() {
        return passwordSource.resolve();
    }

    /** A pool of the stream's login for a committer, with {@link #CONNECTION_OPTIONS}; opened where it runs. */
    public HikariDataSource commitPool(int poolSize) {
        String url = settings.jdbcUrl() + (settings.jdbcUrl().contains("?") ? "&" : "?") + CONNECTION_OPTIONS;
        return Database.pool(
                new PostgresSettings(url, settings.user(), settings.schema(), poolSize), password(), Role.STREAM);
    }

    @Override
    public String toString() {
        return "PostgresTarget{" + settings.jdbcUrl() + " user=" + settings.user() + " schema=" + settings.schema()
                + " password from " + passwordSource + '}';
    }
}
