package dev.recount.tools;

import dev.recount.core.cli.RecountCli;
import dev.recount.tools.advise.AdviseCommand;
import dev.recount.tools.demo.DemoCommand;
import dev.recount.tools.generate.GenerateCommand;
import dev.recount.tools.migrate.MigrateCommand;
import dev.recount.tools.produce.ProduceCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The command line of the user tools: {@code produce}, {@code generate}, {@code demo}, {@code advise},
 * {@code migrate}. A thin dispatcher: each subcommand is its own class; errors, exit codes and {@code --version} are
 * the shared {@link RecountCli}'s, and {@code System.exit} happens only in {@link #main}.
 */
@Command(
        name = "recount",
        mixinStandardHelpOptions = true,
        description = "recount's tools: feed the pipeline, run the demo, advise on settings, migrate a database. "
                + "Every command has --help.",
        subcommands = {
            ProduceCommand.class,
            GenerateCommand.class,
            DemoCommand.class,
            AdviseCommand.class,
            MigrateCommand.class
        })
public final class ToolsMain implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command (see --help)");
    }

    /** The configured command line; tests call {@code commandLine().setOut(..).setErr(..).execute(args)}. */
    public static CommandLine commandLine() {
        return RecountCli.configure(new CommandLine(new ToolsMain())).commandLine();
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }
}
