package dev.recount.core.cli;

import dev.recount.core.config.RecountConfig;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --config FILE}: every command that reads settings mixes this in. The settings are the defaults, then the
 * file ({@code --config}, else {@code $RECOUNT_CONFIG}), then the environment's overrides; a bad setting is a usage
 * error ({@link dev.recount.core.config.ConfigException}), so nothing runs.
 */
public final class ConfigOption {
    /** The environment variable naming the settings file when {@code --config} is not given. */
    public static final String VARIABLE = "RECOUNT_CONFIG";

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Settings file over the built-in defaults (default: $RECOUNT_CONFIG); every setting:"
                    + " config/recount.properties.")
    Path file;

    /** {@code --config} as given; null when it was not. */
    public Path given() {
        return file;
    }

    /** The file the settings come from: {@code --config}, else {@code $RECOUNT_CONFIG} of {@code variables}, else none. */
    public Path file(Map<String, String> variables) {
        if (file != null) return file;
        String fromEnvironment = variables.get(VARIABLE);
        return fromEnvironment == null || fromEnvironment.isBlank() ? null : Path.of(fromEnvironment);
    }

    /** The settings, given the process environment {@code variables}. */
    public RecountConfig load(Map<String, String> variables) {
        return RecountConfig.load(file(variables), variables);
    }

    /** The settings of this process's environment. */
    public RecountConfig load() {
        return load(System.getenv());
    }
}
