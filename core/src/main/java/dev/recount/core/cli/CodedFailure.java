package dev.recount.core.cli;

/**
 * A failure that says which {@link ExitCode} the command exits with ("refused", "busy"): implemented by the
 * exceptions a command throws for such an outcome, anywhere in the cause chain. Any other exception exits
 * {@link ExitCode#FAILED}; a usage error {@link ExitCode#USAGE}.
 */
public interface CodedFailure {
    ExitCode exitCode();
}
