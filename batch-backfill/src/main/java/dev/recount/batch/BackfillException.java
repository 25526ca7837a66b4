package dev.recount.batch;

/** A failure that maps to a specific exit code (see {@link ExitCodes}); its message is the one-line reason. */
public final class BackfillException extends RuntimeException {
    private final int exitCode;

    private BackfillException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public static BackfillException badArguments(String message) {
        return new BackfillException(ExitCodes.BAD_ARGUMENTS, message, null);
    }

    public static BackfillException refusedByBoundary(String message) {
        return new BackfillException(ExitCodes.REFUSED_BY_BOUNDARY, message, null);
    }

    /** Refused for a reason other than the boundary (same exit code: nothing was written, rerun once it is fixed). */
    public static BackfillException refused(String message) {
        return new BackfillException(ExitCodes.REFUSED_BY_BOUNDARY, message, null);
    }

    public static BackfillException lockTimeout(String message, Throwable cause) {
        return new BackfillException(ExitCodes.LOCK_TIMEOUT, message, cause);
    }

    public int exitCode() {
        return exitCode;
    }
}
