package dev.recount.core.cli;

/** The exit codes every recount command shares; a command with more has its own class that repeats these three. */
public final class CommonExitCodes {
    @ExitCodeMeaning("success")
    public static final int OK = 0;

    @ExitCodeMeaning("failed: the reason is the last line on stderr")
    public static final int FAILED = 1;

    @ExitCodeMeaning(
            "bad command line or settings (unknown option, unreadable value, unknown setting): nothing was run")
    public static final int USAGE = 2;

    private CommonExitCodes() {}
}
