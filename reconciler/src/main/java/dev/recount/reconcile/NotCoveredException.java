package dev.recount.reconcile;

import dev.recount.core.cli.CodedFailure;
import dev.recount.core.cli.ExitCode;

/**
 * The batch layer has not (successfully) recomputed all of the requested range, so there is nothing authoritative to
 * reconcile against: refused, retry once the backfill has run.
 */
public final class NotCoveredException extends RuntimeException implements CodedFailure {
    public NotCoveredException(String message) {
        super(message);
    }

    @Override
    public ExitCode exitCode() {
        return ExitCode.REFUSED;
    }
}
