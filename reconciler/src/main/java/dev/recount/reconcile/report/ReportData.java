package dev.recount.reconcile.report;

import dev.recount.core.metrics.Ratio;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison;
import dev.recount.reconcile.Scope;
import dev.recount.reconcile.Tolerances;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a run's report shows, read inside the run's transaction. The full list of diffs is not in here
 * (it can be millions of rows): {@link ReportWriter} streams it into diffs.csv, and collects the largest ones
 * on the way.
 *
 * @param dryRun                 nothing was applied: corrections and final totals are what the run would do
 * @param largestMismatches      the value mismatches that moved spend the most, largest first
 * @param largestMissingInStream keys only the batch has, by spend, largest first
 * @param largestMissingInBatch  keys only the stream has, by spend, largest first
 * @param largestCtrDifferences  mismatched keys whose CTR moved the most (stream vs final), largest first
 */
public record ReportData(
        long runId,
        Scope scope,
        ZoneId zone,
        Instant generatedAt,
        Verdict verdict,
        Comparison comparison,
        WindowMetrics finalTotals,
        long keysFinalized,
        Map<CorrectionLogTable.Reason, Long> corrections,
        Tolerances tolerances,
        boolean dryRun,
        List<ReconciliationDiffsTable.Row> largestMismatches,
        List<ReconciliationDiffsTable.Row> largestMissingInStream,
        List<ReconciliationDiffsTable.Row> largestMissingInBatch,
        List<LargestCtrDiffs.Difference> largestCtrDifferences) {
    public ReportData {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(generatedAt, "generatedAt");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(comparison, "comparison");
        Objects.requireNonNull(finalTotals, "finalTotals");
        Objects.requireNonNull(tolerances, "tolerances");
        corrections = Map.copyOf(corrections);
        largestMismatches = List.copyOf(largestMismatches);
        largestMissingInStream = List.copyOf(largestMissingInStream);
        largestMissingInBatch = List.copyOf(largestMissingInBatch);
        largestCtrDifferences = List.copyOf(largestCtrDifferences);
    }

    /** Without the largest-differences lists (the report writer collects them from the diffs). */
    public ReportData(
            long runId,
            Scope scope,
            ZoneId zone,
            Instant generatedAt,
            Verdict verdict,
            Comparison comparison,
            WindowMetrics finalTotals,
            long keysFinalized,
            Map<CorrectionLogTable.Reason, Long> corrections,
            Tolerances tolerances,
            boolean dryRun) {
        this(
                runId,
                scope,
                zone,
                generatedAt,
                verdict,
                comparison,
                finalTotals,
                keysFinalized,
                corrections,
                tolerances,
                dryRun,
                List.of(),
                List.of(),
                List.of(),
                List.of());
    }

    /** This data with the largest-differences lists (collected while the diffs are written: {@link LargestDiffs}). */
    public ReportData withLargest(
            List<ReconciliationDiffsTable.Row> mismatches,
            List<ReconciliationDiffsTable.Row> missingInStream,
            List<ReconciliationDiffsTable.Row> missingInBatch,
            List<LargestCtrDiffs.Difference> ctrDifferences) {
        return new ReportData(
                runId,
                scope,
                zone,
                generatedAt,
                verdict,
                comparison,
                finalTotals,
                keysFinalized,
                corrections,
                tolerances,
                dryRun,
                mismatches,
                missingInStream,
                missingInBatch,
                ctrDifferences);
    }

    /** Clicks per impression of the range as the stream computed it; null without impressions. */
    public BigDecimal streamCtr() {
        return Ratio.CTR.of(comparison.range().stream());
    }

    /** Clicks per impression of the range as served after this run (a dry run: if applied); null without impressions. */
    public BigDecimal finalCtr() {
        return Ratio.CTR.of(finalTotals);
    }

    public long valuesCorrected() {
        return corrections.values().stream().mapToLong(Long::longValue).sum();
    }
}
