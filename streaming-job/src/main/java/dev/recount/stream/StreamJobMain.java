package dev.recount.stream;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the streaming module: {@code StreamJobMain stream [...]} (what {@code ./recount stream} runs) and,
 * with the same arguments, {@code flink run streaming-job-*-flink.jar stream [...]} on a cluster.
 */
@Command(name = "recount", mixinStandardHelpOptions = true, subcommands = {StreamCommand.class},
        description = "recount's streaming job (the speed layer).")
public final class StreamJobMain implements Runnable {

    public static void main(String[] args) {
        System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs a command line in-process and returns its exit code: 0 success, 1 failure, 2 usage error; errors are one line. */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new StreamJobMain());
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            CommandLine c = e.getCommandLine();
            c.getErr().println("recount " + c.getCommandName() + ": " + oneLine(e) + " (see --help)");
            return 2;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("recount " + commandLine.getCommandName() + ": " + oneLine(e));
            return 1;
        });
        return cli.execute(args);
    }

    /** The innermost message, on one line: what a user can act on. */
    static String oneLine(Throwable e) {
        Throwable t = e;
        String message = null;
        while (t != null) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) message = t.getMessage();
            if (t instanceof IllegalArgumentException || t instanceof IllegalStateException) break;
            t = t.getCause();
        }
        String m = message == null ? e.getClass().getSimpleName() : message;
        // Flink names its own CLI's flag; say which one `recount stream` has (see docs/operations.md, upgrades).
        m = m.replace("set the --allowNonRestoredState option on the CLI",
                "start `recount stream` with --allow-non-restored-state");
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
