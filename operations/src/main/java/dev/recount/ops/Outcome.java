package dev.recount.ops;

/**
 * Maps the exit codes of the steps ({@code backfill ...}, {@code reconcile ...}) onto {@link ExitCodes}, and folds
 * the outcomes of several days into one: a failed step stops the run with its own code; beyond tolerance wins over
 * a failed compaction, which wins over success.
 */
public final class Outcome {
    private boolean beyondTolerance;
    private boolean compactionFailed;

    /** {@code backfill nightly|affected} exit code (batch-backfill's ExitCodes) to this command's. */
    public static int ofBackfill(int code) {
        return switch (code) {
            case dev.recount.batch.ExitCodes.OK -> ExitCodes.OK;
            case dev.recount.batch.ExitCodes.BAD_ARGUMENTS -> ExitCodes.USAGE;
            case dev.recount.batch.ExitCodes.REFUSED_BY_BOUNDARY -> ExitCodes.LAKE_INCOMPLETE;
            case dev.recount.batch.ExitCodes.LOCK_TIMEOUT -> ExitCodes.LOCK_TIMEOUT;
            default -> ExitCodes.BACKFILL_FAILED;
        };
    }

    /** {@code reconcile} exit code (the reconciler's ExitCodes) to this command's. */
    public static int ofReconcile(int code) {
        return switch (code) {
            case dev.recount.reconcile.ExitCodes.WITHIN_TOLERANCE -> ExitCodes.OK;
            case dev.recount.reconcile.ExitCodes.BEYOND_TOLERANCE -> ExitCodes.BEYOND_TOLERANCE;
            case dev.recount.reconcile.ExitCodes.USAGE -> ExitCodes.USAGE;
            case dev.recount.reconcile.ExitCodes.NOT_COVERED -> ExitCodes.RECONCILE_REFUSED;
            default -> ExitCodes.RECONCILE_FAILED;
        };
    }

    /** The worse of two mapped codes: a failure (the first one's if both failed), then beyond tolerance, then OK. */
    public static int worse(int first, int second) {
        boolean firstFailed = first != ExitCodes.OK && first != ExitCodes.BEYOND_TOLERANCE;
        boolean secondFailed = second != ExitCodes.OK && second != ExitCodes.BEYOND_TOLERANCE;
        if (firstFailed) return first;
        if (secondFailed) return second;
        return first == ExitCodes.BEYOND_TOLERANCE ? first : second;
    }

    /** Records a compaction's exit code; any failure (lock timeout included) is a failed compaction. */
    public void compacted(int backfillCode) {
        if (backfillCode != dev.recount.batch.ExitCodes.OK) compactionFailed = true;
    }

    /** Records a reconciliation's mapped code; returns true when the run must stop (the step failed). */
    public boolean reconciled(int mappedCode) {
        if (mappedCode == ExitCodes.BEYOND_TOLERANCE) beyondTolerance = true;
        return mappedCode != ExitCodes.OK && mappedCode != ExitCodes.BEYOND_TOLERANCE;
    }

    /** The code of a run in which no step failed. */
    public int finished() {
        if (beyondTolerance) return ExitCodes.BEYOND_TOLERANCE;
        if (compactionFailed) return ExitCodes.COMPACTION_FAILED;
        return ExitCodes.OK;
    }
}
