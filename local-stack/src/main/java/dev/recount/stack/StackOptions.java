package dev.recount.stack;

import dev.recount.core.config.RecountConfig;
import dev.recount.stack.embedded.StackLayout;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options every local-stack command shares: where the stack lives and which config file to read. */
public final class StackOptions {
    @Option(
            names = "--home",
            paramLabel = "DIR",
            description =
                    "Directory of the local stack's data, logs and local.env (default: local.home from the config, `.recount`, relative to the current directory).")
    Path home;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description =
                    "Config file over the built-in defaults (default: $RECOUNT_CONFIG if set). See config/recount.properties.")
    Path configFile;

    public RecountConfig config() {
        return RecountConfig.fromEnvironment(configFile);
    }

    public StackLayout layout(RecountConfig config) {
        return new StackLayout(home != null ? home : Path.of(config.get("local.home")));
    }
}
