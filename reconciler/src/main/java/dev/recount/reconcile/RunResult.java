package dev.recount.reconcile;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The outcome of one successful reconciliation (or dry run).
 *
 * @param dryRun        nothing was applied: keysFinalized, corrections and finalTotals are what the run would have
 *                      done and served
 * @param finalTotals   what {@code window_metrics} serves for the scope after the run (equals the batch totals)
 * @param keysFinalized rows of {@code window_corrections} inserted or changed
 * @param corrections   correction-log entries appended, per reason
 * @param reportDir     the run's report directory
 */
public record RunResult(
        long runId,
        Scope scope,
        boolean dryRun,
        Verdict verdict,
        Comparison comparison,
        WindowMetrics finalTotals,
        long keysFinalized,
        Map<CorrectionLogTable.Reason, Long> corrections,
        Path reportDir,
        Timings timings) {
    public RunResult {
        corrections = Map.copyOf(corrections);
    }

    public long valuesCorrected() {
        return corrections.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Wall time of the phases, for the benchmark and the log: the one statement that compares, finalizes and logs;
     * the check of the serving view; the report; and the whole run.
     */
    public record Timings(Duration reconcile, Duration check, Duration report, Duration total) {}
}
