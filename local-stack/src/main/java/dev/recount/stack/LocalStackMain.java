package dev.recount.stack;

import dev.recount.core.cli.RecountCli;
import picocli.CommandLine;

/**
 * The command line of the local stack: {@code up}, {@code down}, {@code status}. A thin dispatcher: each subcommand
 * is its own class; errors, exit codes and {@code --version} are the shared {@link RecountCli}'s, and
 * {@code System.exit} happens only in {@link #main}.
 */
public final class LocalStackMain {
    private LocalStackMain() {}

    /** The configured command line; tests call {@code commandLine().setOut(..).setErr(..).execute(args)}. */
    public static CommandLine commandLine() {
        return RecountCli.of(
                        "recount's local stack: an embedded Kafka broker and PostgreSQL. Every command has --help.",
                        UpCommand.class,
                        DownCommand.class,
                        StatusCommand.class)
                .commandLine();
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }
}
