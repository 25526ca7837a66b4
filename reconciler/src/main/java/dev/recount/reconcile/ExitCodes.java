package dev.recount.reconcile;

/**
 * Exit codes of {@code reconcile}, distinct so a scheduler can alert on each (documented in README.md and
 * {@code --help}). A run that ends 0 or 3 has applied its corrections and written its report.
 */
public final class ExitCodes {
    /** Reconciled; every key within tolerance. */
    public static final int WITHIN_TOLERANCE = 0;
    /** Error: database unreachable, run failed (rolled back, recorded as failed), report not writable, ... */
    public static final int ERROR = 1;
    /** Bad command line or configuration. Nothing was run. */
    public static final int USAGE = 2;
    /** Reconciled and corrected, but at least one key differs beyond tolerance: alert. */
    public static final int BEYOND_TOLERANCE = 3;
    /** Refused: no succeeded batch run covers (part of) the range yet. Run the backfill first, then retry. */
    public static final int NOT_COVERED = 4;

    private ExitCodes() {}
}
