package dev.recount.batch;

import dev.recount.core.cli.ExitCodeMeaning;

/**
 * Exit codes of {@code ./recount backfill}, distinct so a scheduler can tell "try again later" from "broken".
 * {@code --help} lists them from here, and docs/contract.md must name each (its test reads this class).
 */
public final class ExitCodes {
    @ExitCodeMeaning("done")
    public static final int OK = 0;

    /** The run failed (database, lake, Kafka, Spark): see the one-line reason and the batch_runs row. */
    @ExitCodeMeaning("failed (database, lake, Kafka, Spark): the reason is on stderr and in the run's batch_runs row")
    public static final int FAILED = 1;

    /** Bad arguments or settings: unknown option, unreadable instant, range not window-aligned, ... */
    @ExitCodeMeaning(
            "bad arguments or settings (unknown option, unreadable instant, range not window-aligned): nothing was run")
    public static final int BAD_ARGUMENTS = 2;

    /**
     * Refused: beyond the lake's completeness boundary (rerun later, or with --force), retention, a lake hour that
     * lost files, window size.
     */
    @ExitCodeMeaning(
            "refused: the range reaches beyond the lake's completeness boundary (rerun later, or with --force),"
                    + " or before its retention horizon, or a lake hour of it holds fewer rows than the stream"
                    + " archived into it (files lost: restore them, or --force), or the stream's rows in it have"
                    + " another window size")
    public static final int REFUSED_BY_BOUNDARY = 3;

    /** Another backfill held an overlapping range for longer than batch.lock-timeout. */
    @ExitCodeMeaning("lock timeout: an overlapping backfill ran longer than batch.lock-timeout")
    public static final int LOCK_TIMEOUT = 4;

    private ExitCodes() {}
}
