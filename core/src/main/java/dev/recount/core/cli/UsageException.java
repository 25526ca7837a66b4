package dev.recount.core.cli;

/**
 * Bad input found only once a command runs (a setting, a combination of options): exits {@link ExitCode#USAGE}
 * like a parse error, because nothing was run and rerunning unchanged cannot help.
 */
public class UsageException extends IllegalArgumentException {
    public UsageException(String message) {
        super(message);
    }

    public UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
