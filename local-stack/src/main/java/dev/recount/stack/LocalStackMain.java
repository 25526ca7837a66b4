package dev.recount.stack;

import dev.recount.core.cli.RecountCli;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The command line of the local stack: {@code up}, {@code down}, {@code status}. A thin dispatcher: each subcommand
 * is its own class; errors, exit codes and {@code --version} are the shared {@link RecountCli}'s, and
 * {@code System.exit} happens only in {@link #main}.
 */
@Command(
        name = "recount",
        mixinStandardHelpOptions = true,
        description = "recount's local stack: an embedded Kafka broker and PostgreSQL. Every command has --help.",
        subcommands = {UpCommand.class, DownCommand.class, StatusCommand.class})
public final class LocalStackMain implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command (see --help)");
    }

    /** The configured command line; tests call {@code commandLine().setOut(..).setErr(..).execute(args)}. */
    public static CommandLine commandLine() {
        return RecountCli.configure(new CommandLine(new LocalStackMain())).commandLine();
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }
}
