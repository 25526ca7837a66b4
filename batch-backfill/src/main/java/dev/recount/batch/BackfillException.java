package dev.recount.batch;

import dev.recount.core.cli.CodedFailure;
import dev.recount.core.cli.ExitCode;

/** A failure with an exit code of its own ({@link ExitCode}); its message is the one-line reason. */
public final class BackfillException extends RuntimeException implements CodedFailure {
    private final ExitCode exitCode;

    private BackfillException(ExitCode exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public static BackfillException badArguments(String message) {
        return new BackfillException(ExitCode.USAGE, message, null);
    }

    /** The range reaches beyond the lake's completeness boundary: the stream is behind, retry later. */
    public static BackfillException refusedByBoundary(String message) {
        return new BackfillException(ExitCode.REFUSED, message, null);
    }

    /** Refused for a reason other than the boundary (same exit code: nothing was written, rerun once it is fixed). */
    public static BackfillException refused(String message) {
        return new BackfillException(ExitCode.REFUSED, message, null);
    }

    public static BackfillException lockTimeout(String message, Throwable cause) {
        return new BackfillException(ExitCode.BUSY, message, cause);
    }

    @Override
    public ExitCode exitCode() {
        return exitCode;
    }
}
