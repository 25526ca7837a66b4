package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import java.util.Map;
import java.util.Objects;

/**
 * What a run found and did for one metric set (a dry run: would have done).
 *
 * @param scope         the set's part of the run's scope (its own windows, for a batch run that named them)
 * @param verdict       beyond tolerance when a key of the set is, or its attribution differs anywhere
 * @param finalTotals   what the set's {@code window_metrics} serves for the scope after the run (the batch totals)
 * @param keysFinalized rows of the set's {@code window_corrections} inserted or changed (attribution's not included)
 * @param corrections   correction-log entries appended, per reason, attribution's included
 * @param attribution   the set's attribution comparison ({@link AttributionReconciliation.Outcome#NONE} without)
 */
public record SetResult(
        MetricSet set,
        Scope scope,
        Verdict verdict,
        Comparison comparison,
        MeasureValues finalTotals,
        long keysFinalized,
        Map<CorrectionLogTable.Reason, Long> corrections,
        AttributionReconciliation.Outcome attribution) {
    public SetResult {
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(comparison, "comparison");
        Objects.requireNonNull(finalTotals, "finalTotals");
        Objects.requireNonNull(attribution, "attribution");
        corrections = Map.copyOf(corrections);
    }

    public String name() {
        return set.name();
    }

    public long valuesCorrected() {
        return corrections.values().stream().mapToLong(Long::longValue).sum();
    }
}
