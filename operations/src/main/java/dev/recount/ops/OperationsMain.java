package dev.recount.ops;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of {@code ./recount nightly} and {@code ./recount correct}: the batch backfill and the reconciler run
 * in one JVM, one after the other. Only wires and exits; the commands return their exit codes ({@link ExitCodes}).
 */
@Command(name = "recount", mixinStandardHelpOptions = true, version = "recount operations 0.1.0",
        subcommands = {NightlyCommand.class, CorrectCommand.class},
        description = "Scheduled operations: nightly (backfill, compact, reconcile a day) and correct (late data).")
public final class OperationsMain implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(OperationsEnvironment.system(), new PrintWriter(System.out, true),
                new PrintWriter(System.err, true), args));
    }

    /** Runs one command line in-process and returns its exit code (tests use this with captured output). */
    public static int execute(OperationsEnvironment env, PrintWriter out, PrintWriter err, String... args) {
        CommandLine cmd = commandLine(env);
        cmd.setOut(out);
        cmd.setErr(err);
        return cmd.execute(args);
    }

    static CommandLine commandLine(OperationsEnvironment env) {
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> cls) throws Exception {
                if (cls == NightlyCommand.class) return cls.cast(new NightlyCommand(env));
                if (cls == CorrectCommand.class) return cls.cast(new CorrectCommand(env));
                return CommandLine.defaultFactory().create(cls);
            }
        };
        return withExitCodes(new CommandLine(OperationsMain.class, factory));
    }

    /** Usage errors exit 2 with a one-line reason; an exception escaping a command exits 1. */
    static CommandLine withExitCodes(CommandLine cmd) {
        cmd.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println("recount " + c.getCommandName() + ": " + oneLine(ex) + " (see --help)");
            c.getErr().flush();
            return ExitCodes.USAGE;
        });
        cmd.setExecutionExceptionHandler((ex, c, parsed) -> {
            c.getErr().println("recount " + c.getCommandName() + ": failed: " + oneLine(ex));
            c.getErr().flush();
            return ExitCodes.ERROR;
        });
        return cmd;
    }

    static String oneLine(Throwable t) {
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: nightly or correct");
    }
}
