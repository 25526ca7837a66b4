package dev.recount.stream;

import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of the streaming module: {@code StreamJobMain stream [...]} (what {@code ./recount stream} runs) and,
 * with the same arguments, {@code flink run streaming-job-*-flink.jar stream [...]} on a cluster. Errors, exit codes
 * and {@code --version} are the shared {@link RecountCli}'s.
 */
public final class StreamJobMain {
    private StreamJobMain() {}

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }

    /** Runs a command line in-process and returns its exit code: 0 success, 1 failure, 2 usage error; errors are one line. */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        return RecountCli.execute(commandLine(), out, err, args);
    }

    /** The configured command line (nothing is started until it executes). */
    public static CommandLine commandLine() {
        return RecountCli.of("recount's streaming job (the speed layer).", StreamCommand.class)
                .reasons((failure, reason) -> namingOurFlag(reason))
                .commandLine();
    }

    /** The reason a failure is reported with, on one line: what a user can act on. */
    static String oneLine(Throwable e) {
        return namingOurFlag(RecountCli.reason(e));
    }

    /** Flink names its own CLI's flag; say which one `recount stream` has (see docs/operations.md, upgrades). */
    private static String namingOurFlag(String reason) {
        return reason.replace(
                "set the --allowNonRestoredState option on the CLI",
                "start `recount stream` with --allow-non-restored-state");
    }
}
