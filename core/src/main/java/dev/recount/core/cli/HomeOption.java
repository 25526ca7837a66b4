package dev.recount.core.cli;

import dev.recount.core.config.RecountConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --home DIR}: where the local stack keeps its data, logs and {@code local.env} (up, down, status, demo). */
public final class HomeOption {
    @Option(
            names = "--home",
            paramLabel = "DIR",
            description = "The local stack's home: its data, logs and local.env (default: local.home, .recount in"
                    + " the current directory).")
    Path home;

    /** {@code --home}, else the setting {@code local.home}. */
    public Path home(RecountConfig config) {
        return home != null ? home : Path.of(config.get("local.home"));
    }

    /** {@code --home} as given; null when it was not. */
    public Path given() {
        return home;
    }
}
