package dev.recount.reconcile;

/** The batch layer has not (successfully) recomputed all of the requested range, so there is nothing authoritative to reconcile against. */
public final class NotCoveredException extends RuntimeException {
    public NotCoveredException(String message) {
        super(message);
    }
}
