package dev.recount.reconcile;

import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code ./recount reconcile}. Only wires and exits: the commands return their exit codes
 * (see {@link ExitCodes}) and print a one-line reason on failure.
 */
public final class ReconcileMain {
    private ReconcileMain() {}

    public static void main(String[] args) {
        System.exit(execute(CommandEnvironment.system(), new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the command line in-process (tests use this with captured output). */
    public static int execute(CommandEnvironment env, PrintWriter out, PrintWriter err, String... args) {
        CommandLine cmd = commandLine(env);
        cmd.setOut(out);
        cmd.setErr(err);
        return cmd.execute(args);
    }

    static CommandLine commandLine(CommandEnvironment env) {
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> cls) throws Exception {
                if (cls == ReconcileCommand.class) return cls.cast(new ReconcileCommand(env));
                if (cls == NightlyDatesCommand.class) return cls.cast(new NightlyDatesCommand(env));
                if (cls == ReconcilePendingCommand.class) return cls.cast(new ReconcilePendingCommand(env));
                return CommandLine.defaultFactory().create(cls);
            }
        };
        CommandLine cmd = new CommandLine(ReconcileCommand.class, factory);
        cmd.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println(c.getCommandName() + ": " + Reconciler.oneLine(ex) + " (see --help)");
            c.getErr().flush();
            return ExitCodes.USAGE;
        });
        cmd.setExecutionExceptionHandler((ex, c, parseResult) -> {
            int code = ex instanceof NotCoveredException ? ExitCodes.NOT_COVERED : ExitCodes.ERROR;
            c.getErr().println(c.getCommandName() + ": " + (code == ExitCodes.NOT_COVERED ? "refused: " : "failed: ")
                    + Reconciler.oneLine(ex));
            c.getErr().flush();
            return code;
        });
        return cmd;
    }
}
