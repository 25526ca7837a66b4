package dev.recount.batch;

/**
 * Exit codes of {@code ./recount backfill}, distinct so a scheduler can tell "try again later" from "broken".
 * Documented in batch-backfill/README.md.
 */
public final class ExitCodes {
    public static final int OK = 0;
    /** The run failed (database, lake, Kafka, Spark): see the one-line reason and the batch_runs row. */
    public static final int FAILED = 1;
    /** Bad arguments or settings: unknown option, unreadable instant, range not window-aligned, ... */
    public static final int BAD_ARGUMENTS = 2;
    /** Refused: the range reaches beyond the lake's completeness boundary (rerun later, or with --force). */
    public static final int REFUSED_BY_BOUNDARY = 3;
    /** Another backfill held an overlapping range for longer than batch.lock-timeout. */
    public static final int LOCK_TIMEOUT = 4;

    private ExitCodes() {}
}
