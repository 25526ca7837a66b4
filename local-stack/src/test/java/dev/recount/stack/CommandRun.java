package dev.recount.stack;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One in-process run of the command line with its output captured. */
record CommandRun(int exitCode, String out, String err) {
    static CommandRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = LocalStackMain.commandLine()
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new CommandRun(exit, out.toString(), err.toString());
    }

    /** The error output is exactly one line, as the command-line rules require. */
    boolean errIsOneLine() {
        return !err.isBlank() && err.strip().lines().count() == 1;
    }
}
