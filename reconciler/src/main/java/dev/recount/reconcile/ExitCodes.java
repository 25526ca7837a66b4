package dev.recount.reconcile;

import dev.recount.core.cli.ExitCodeMeaning;

/**
 * Exit codes of {@code reconcile}, distinct so a scheduler can alert on each ({@code --help} lists them from here;
 * docs/contract.md must name each). A run that ends 0 or 3 has applied its corrections and written its report.
 */
public final class ExitCodes {
    /** Reconciled; every key within tolerance. */
    @ExitCodeMeaning("reconciled, every key within tolerance (with --dry-run: would be, nothing applied)")
    public static final int WITHIN_TOLERANCE = 0;

    /** Error: database unreachable, run failed (rolled back, recorded as failed), report not writable, ... */
    @ExitCodeMeaning("error (the run, if started, is recorded as failed and rolled back)")
    public static final int ERROR = 1;

    /** Bad command line or configuration. Nothing was run. */
    @ExitCodeMeaning("bad command line or configuration: nothing was run")
    public static final int USAGE = 2;

    /** Reconciled and corrected, but at least one key differs beyond tolerance: alert. */
    @ExitCodeMeaning(
            "reconciled and corrected, but some key is beyond tolerance (alert; with --dry-run: nothing applied)")
    public static final int BEYOND_TOLERANCE = 3;

    /**
     * Refused: no succeeded batch run covers (part of) the range yet, for every metric set or for some (the others
     * were reconciled, within tolerance). Run the backfill first, then retry.
     */
    @ExitCodeMeaning("refused: no succeeded batch run covers the range yet for a metric set (run the backfill, then"
            + " retry; any other set was reconciled), or stream and batch rows in it have different window sizes")
    public static final int NOT_COVERED = 4;

    private ExitCodes() {}
}
