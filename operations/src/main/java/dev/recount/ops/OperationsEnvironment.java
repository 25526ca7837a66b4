package dev.recount.ops;

import dev.recount.batch.SparkSessions;
import dev.recount.core.config.RecountConfig;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine;

/**
 * What the commands take from outside: the process environment, the clock ("yesterday"), and where the Spark
 * session comes from (the CLI makes and stops one per step; tests share one per JVM).
 */
public record OperationsEnvironment(Map<String, String> variables, Clock clock, SparkSessions sparkSessions) {
    public OperationsEnvironment {
        variables = Map.copyOf(variables);
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(sparkSessions, "sparkSessions");
    }

    public static OperationsEnvironment system() {
        return new OperationsEnvironment(System.getenv(), Clock.systemUTC(), SparkSessions.OWNED);
    }

    /** Defaults, then {@code --config} (or $RECOUNT_CONFIG), then the environment; a bad setting is a usage error. */
    RecountConfig config(CommandLine cmd, Path configFile) {
        Path file = configFile;
        String fromEnv = variables.get("RECOUNT_CONFIG");
        if (file == null && fromEnv != null && !fromEnv.isBlank()) file = Path.of(fromEnv);
        try {
            RecountConfig config = RecountConfig.load(file, variables);
            config.timeZone(); // fail here, as a usage error, rather than between two steps
            return config;
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
    }
}
