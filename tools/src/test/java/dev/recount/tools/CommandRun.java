package dev.recount.tools;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One in-process run of the tools' command line with its output captured. */
public record CommandRun(int exitCode, String out, String err) {
    public static CommandRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ToolsMain.commandLine()
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new CommandRun(exit, out.toString(), err.toString());
    }

    /** The error output is exactly one line, as the command-line rules require. */
    public boolean errIsOneLine() {
        return !err.isBlank() && err.strip().lines().count() == 1;
    }
}
