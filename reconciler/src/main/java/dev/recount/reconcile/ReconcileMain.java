package dev.recount.reconcile;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code ./recount reconcile}. Only wires and exits: the commands return their exit codes
 * (recount's {@link ExitCode}); errors are the shared {@link RecountCli}'s one line.
 */
public final class ReconcileMain {
    private ReconcileMain() {}

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }

    /** Runs the command line in-process (tests use this with captured output). */
    public static int execute(CommandEnvironment env, PrintWriter out, PrintWriter err, String... args) {
        return RecountCli.execute(commandLine(env), out, err, args);
    }

    /** The command line users get (nothing connects until it executes). */
    public static CommandLine commandLine() {
        return commandLine(CommandEnvironment.system());
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
        return RecountCli.single(factory, ReconcileCommand.class).commandLine();
    }
}
