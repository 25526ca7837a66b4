package dev.recount.ops;

import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code ./recount nightly} and {@code ./recount correct}: the batch backfill and the reconciler run
 * in one JVM, one after the other. Only wires and exits; the commands return their exit codes (recount's one table, {@link dev.recount.core.cli.ExitCode}).
 */
public final class OperationsMain {
    private OperationsMain() {}

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }

    /** Runs one command line in-process and returns its exit code (tests use this with captured output). */
    public static int execute(OperationsEnvironment env, PrintWriter out, PrintWriter err, String... args) {
        return RecountCli.execute(commandLine(env), out, err, args);
    }

    /** The command line users get (nothing connects until it executes). */
    public static CommandLine commandLine() {
        return commandLine(OperationsEnvironment.system());
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
        return RecountCli.of(
                        "Scheduled operations: nightly (backfill, compact, reconcile a day) and correct (late data).",
                        factory,
                        NightlyCommand.class,
                        CorrectCommand.class)
                .commandLine();
    }
}
