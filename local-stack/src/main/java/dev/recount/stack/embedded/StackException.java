package dev.recount.stack.embedded;

/**
 * A failure of the local stack that the user can act on. Its message is the one line the command line prints,
 * so it names the thing that failed and, where there is one, the log or command that helps.
 */
public final class StackException extends RuntimeException {
    public StackException(String message) {
        super(message);
    }

    public StackException(String message, Throwable cause) {
        super(message, cause);
    }
}
