package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.Component;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.Database;
import dev.recount.db.Role;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine;

/** What the commands take from outside: the process environment and the clock (tests pass their own). */
public record CommandEnvironment(Map<String, String> variables, Clock clock) {
    public CommandEnvironment {
        variables = Map.copyOf(variables);
        Objects.requireNonNull(clock, "clock");
    }

    public static CommandEnvironment system() {
        return new CommandEnvironment(System.getenv(), Clock.systemUTC());
    }

    /** Defaults, then {@code --config} (or $RECOUNT_CONFIG), then the environment; a bad setting is a usage error. */
    RecountConfig config(CommandLine cmd, Path configFile) {
        Path file = configFile;
        String fromEnv = variables.get("RECOUNT_CONFIG");
        if (file == null && fromEnv != null && !fromEnv.isBlank()) file = Path.of(fromEnv);
        try {
            RecountConfig config = RecountConfig.load(file, variables);
            config.timeZone(); // fail here, as a usage error, rather than halfway through a run
            return config;
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
    }

    /** The reconciler's pool, logged in as its own login ({@code postgres.reconciler.user}). */
    static HikariDataSource pool(RecountConfig config) {
        return Database.pool(
                config.postgres(Component.RECONCILER), config.password(Component.RECONCILER), Role.RECONCILER);
    }
}
