package dev.recount.tools;

import dev.recount.core.cli.RecountCli;
import dev.recount.tools.advise.AdviseCommand;
import dev.recount.tools.demo.DemoCommand;
import dev.recount.tools.generate.GenerateCommand;
import dev.recount.tools.migrate.MigrateCommand;
import dev.recount.tools.produce.ProduceCommand;
import picocli.CommandLine;

/**
 * The command line of the user tools: {@code produce}, {@code generate}, {@code demo}, {@code advise},
 * {@code migrate}. A thin dispatcher: each subcommand is its own class; errors, exit codes and {@code --version} are
 * the shared {@link RecountCli}'s, and {@code System.exit} happens only in {@link #main}.
 */
public final class ToolsMain {
    private ToolsMain() {}

    /** The configured command line; tests call {@code commandLine().setOut(..).setErr(..).execute(args)}. */
    public static CommandLine commandLine() {
        return RecountCli.of(
                        "recount's tools: feed the pipeline, run the demo, advise on settings, migrate a database. "
                                + "Every command has --help.",
                        ProduceCommand.class,
                        GenerateCommand.class,
                        DemoCommand.class,
                        AdviseCommand.class,
                        MigrateCommand.class)
                .commandLine();
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }
}
