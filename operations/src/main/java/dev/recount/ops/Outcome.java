package dev.recount.ops;

import dev.recount.core.cli.ExitCode;

/**
 * Reads the exit codes of the steps ({@code backfill ...}, {@code reconcile ...}) as this command's, and folds the
 * outcomes of several days into one: a failed step stops the run with its own code; beyond tolerance wins over a
 * failed compaction ({@link ExitCode#PARTLY}), which wins over success. Every command shares recount's one table
 * ({@link ExitCode}), so a step's code is the command's, except that anything outside the table is a failure.
 */
public final class Outcome {
    private boolean beyondTolerance;
    private boolean compactionFailed;

    /** {@code backfill nightly|affected} exit code to this command's. */
    public static int ofBackfill(int code) {
        return switch (ExitCode.of(code)) {
            case OK, USAGE, REFUSED, BUSY -> code;
            default -> ExitCode.FAILED.code();
        };
    }

    /** {@code reconcile} exit code to this command's. */
    public static int ofReconcile(int code) {
        return switch (ExitCode.of(code)) {
            case OK, BEYOND_TOLERANCE, USAGE, REFUSED -> code;
            default -> ExitCode.FAILED.code();
        };
    }

    /** The worse of two mapped codes: a failure (the first one's if both failed), then beyond tolerance, then OK. */
    public static int worse(int first, int second) {
        if (failed(first)) return first;
        if (failed(second)) return second;
        return first == ExitCode.BEYOND_TOLERANCE.code() ? first : second;
    }

    private static boolean failed(int code) {
        return code != ExitCode.OK.code() && code != ExitCode.BEYOND_TOLERANCE.code();
    }

    /** Records a compaction's exit code; any failure (a busy lock included) is a failed compaction. */
    public void compacted(int backfillCode) {
        if (backfillCode != ExitCode.OK.code()) compactionFailed = true;
    }

    /** Records a reconciliation's mapped code; returns true when the run must stop (the step failed). */
    public boolean reconciled(int mappedCode) {
        if (mappedCode == ExitCode.BEYOND_TOLERANCE.code()) beyondTolerance = true;
        return failed(mappedCode);
    }

    /** The code of a run in which no step failed. */
    public int finished() {
        if (beyondTolerance) return ExitCode.BEYOND_TOLERANCE.code();
        if (compactionFailed) return ExitCode.PARTLY.code();
        return ExitCode.OK.code();
    }
}
