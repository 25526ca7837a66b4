package dev.recount.ops;

import dev.recount.core.cli.ExitCodeMeaning;

/**
 * Exit codes of {@code nightly} and {@code correct}: one per outcome, so a scheduler (CronJob podFailurePolicy, an
 * alert on the exit code) can tell "beyond tolerance" from "the stream is behind" from "broken" without reading
 * logs. The table in README.md and docs/operations.md lists the same numbers; {@link Outcome} maps the steps'
 * own codes (backfill's and reconcile's) onto these.
 */
public final class ExitCodes {
    /** Every step ran; every reconciled key within tolerance (or, for correct, nothing new to do). */
    @ExitCodeMeaning("every step ran and every reconciled key is within tolerance (correct: or nothing new to do)")
    public static final int OK = 0;
    /** An error of the command itself (not of a step): e.g. the database for the date list unreachable. */
    @ExitCodeMeaning("error of the command itself, not of a step (e.g. the database unreachable)")
    public static final int ERROR = 1;
    /** Bad command line or configuration. Nothing was run. */
    @ExitCodeMeaning("bad command line or configuration: nothing was run")
    public static final int USAGE = 2;
    /** Reconciled and corrected, but some key differs beyond tolerance: alert (corrections are applied). */
    @ExitCodeMeaning("reconciled and corrected, but some key is beyond tolerance (alert)")
    public static final int BEYOND_TOLERANCE = 3;
    /** Backfill refused: the day reaches beyond the lake's completeness boundary (the stream is behind), or before
     * its retention horizon. Retry later. */
    @ExitCodeMeaning("nightly: backfill refused (the day reaches beyond the lake's completeness boundary, or before"
            + " its retention horizon): retry later")
    public static final int LAKE_INCOMPLETE = 4;
    /** The backfill failed (database, lake, Kafka, Spark). */
    @ExitCodeMeaning("the backfill failed (database, lake, Kafka, Spark)")
    public static final int BACKFILL_FAILED = 5;
    /** An overlapping backfill held its lock longer than batch.lock-timeout. Retry later. */
    @ExitCodeMeaning("an overlapping backfill held its lock longer than batch.lock-timeout: retry later")
    public static final int LOCK_TIMEOUT = 6;
    /** Reconcile refused: no succeeded batch run covers the range. */
    @ExitCodeMeaning("reconcile refused: no succeeded batch run covers the range")
    public static final int RECONCILE_REFUSED = 7;
    /** The reconciliation failed (rolled back, recorded as failed). */
    @ExitCodeMeaning("the reconciliation failed (rolled back, recorded as failed)")
    public static final int RECONCILE_FAILED = 8;
    /** Compaction failed; backfill and reconcile succeeded within tolerance (results do not depend on it). */
    @ExitCodeMeaning("nightly: compaction failed; backfill and reconcile succeeded within tolerance")
    public static final int COMPACTION_FAILED = 9;
    /** correct: another correct run holds the lock (and --wait, if given, ran out). Nothing was run. */
    @ExitCodeMeaning("correct: another correct run holds the lock (and --wait ran out); nothing was run")
    public static final int ALREADY_RUNNING = 10;

    private ExitCodes() {}
}
