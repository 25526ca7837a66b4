package dev.recount.deploy;

import dev.recount.deploy.advise.AdviseCommand;
import dev.recount.deploy.demo.DemoCommand;
import dev.recount.deploy.generate.GenerateCommand;
import dev.recount.deploy.local.StackException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The command line of the deploy module: the local stack ({@code up}, {@code down}, {@code status}) and the tools
 * that feed it ({@code produce}). A thin dispatcher: each subcommand is its own class; errors become one line on
 * stderr and an exit code, and {@code System.exit} happens only in {@link #main}.
 */
@Command(name = "recount", mixinStandardHelpOptions = true,
        description = "recount's local stack and tools. Every command has --help.",
        subcommands = {UpCommand.class, DownCommand.class, StatusCommand.class, ProduceCommand.class,
                GenerateCommand.class, DemoCommand.class, AdviseCommand.class, HelpCommand.class})
public final class RecountLocal implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(RecountLocal.class);

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command (see --help)");
    }

    /** The configured command line; tests call {@code commandLine().setOut(..).setErr(..).execute(args)}. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new RecountLocal());
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine failed = ex.getCommandLine();
            failed.getErr().println(failed.getCommandSpec().qualifiedName() + ": " + oneLine(ex.getMessage())
                    + " (see " + failed.getCommandSpec().qualifiedName() + " --help)");
            return failed.getCommandSpec().exitCodeOnInvalidInput();
        });
        cl.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            LOG.debug("{} failed", failed.getCommandSpec().qualifiedName(), ex);
            failed.getErr().println(failed.getCommandSpec().qualifiedName() + ": " + reason(ex));
            return failed.getCommandSpec().exitCodeOnExecutionException();
        });
        return cl;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** Our own failures carry a message meant for the user; anything else is named by its type as well. */
    static String reason(Throwable ex) {
        if (ex instanceof StackException || ex instanceof IllegalArgumentException) return oneLine(ex.getMessage());
        return oneLine(ex.getClass().getSimpleName() + (ex.getMessage() == null ? "" : ": " + ex.getMessage()));
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
