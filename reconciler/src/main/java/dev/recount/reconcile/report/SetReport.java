package dev.recount.reconcile.report;

import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Comparison;
import dev.recount.reconcile.Scope;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the report shows of one metric set, read inside the run's transaction: its section of report.html, its
 * diffs file and its part of summary.json. The full list of its diffs is not in here (it can be millions of rows):
 * {@link ReportWriter} streams it into the set's diffs file and collects the largest ones on the way.
 *
 * @param scope                   the set's part of the run's scope
 * @param sections                what the set adds beyond its window metrics (its attribution)
 * @param largestMismatches       the value mismatches that moved the set's sums the most, largest first
 * @param largestMissingInStream  keys only the batch has, largest first
 * @param largestMissingInBatch   keys only the stream has, largest first
 * @param largestRatioDifferences mismatched keys whose {@link #ratio} moved the most (stream vs final), largest first
 */
public record SetReport(
        MetricSet set,
        Scope scope,
        Verdict verdict,
        Comparison comparison,
        MeasureValues finalTotals,
        long keysFinalized,
        Map<CorrectionLogTable.Reason, Long> corrections,
        List<ReportSection> sections,
        List<ReconciliationDiffsTable.Row> largestMismatches,
        List<ReconciliationDiffsTable.Row> largestMissingInStream,
        List<ReconciliationDiffsTable.Row> largestMissingInBatch,
        List<LargestRatioDiffs.Difference> largestRatioDifferences) {
    /** The diffs file of the default set (the name it always had); every other set's is {@code diffs-<set>.csv}. */
    public static final String DEFAULT_CSV = "diffs.csv";

    public SetReport {
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(comparison, "comparison");
        Objects.requireNonNull(finalTotals, "finalTotals");
        corrections = Map.copyOf(corrections);
        sections = List.copyOf(sections);
        largestMismatches = List.copyOf(largestMismatches);
        largestMissingInStream = List.copyOf(largestMissingInStream);
        largestMissingInBatch = List.copyOf(largestMissingInBatch);
        largestRatioDifferences = List.copyOf(largestRatioDifferences);
    }

    /** Without the largest-differences lists (the report writer collects them from the diffs). */
    public SetReport(
            MetricSet set,
            Scope scope,
            Verdict verdict,
            Comparison comparison,
            MeasureValues finalTotals,
            long keysFinalized,
            Map<CorrectionLogTable.Reason, Long> corrections,
            List<ReportSection> sections) {
        this(
                set,
                scope,
                verdict,
                comparison,
                finalTotals,
                keysFinalized,
                corrections,
                sections,
                List.of(),
                List.of(),
                List.of(),
                List.of());
    }

    /** This set's data with the largest-differences lists (collected while its diffs are written). */
    public SetReport withLargest(
            List<ReconciliationDiffsTable.Row> mismatches,
            List<ReconciliationDiffsTable.Row> missingInStream,
            List<ReconciliationDiffsTable.Row> missingInBatch,
            List<LargestRatioDiffs.Difference> ratioDifferences) {
        return new SetReport(
                set,
                scope,
                verdict,
                comparison,
                finalTotals,
                keysFinalized,
                corrections,
                sections,
                mismatches,
                missingInStream,
                missingInBatch,
                ratioDifferences);
    }

    public String name() {
        return set.name();
    }

    public SetTables tables() {
        return new SetTables(set);
    }

    /** The set's diffs file: {@value #DEFAULT_CSV} for the default set, {@code diffs-<set>.csv} for any other. */
    public String csvFile() {
        return set.isDefault() ? DEFAULT_CSV : "diffs-" + set.name() + ".csv";
    }

    /** The ratio the report shows ({@link Labels#shownRatio}), null when the set has none. */
    public DerivedRatio ratio() {
        return Labels.shownRatio(set);
    }

    /** {@link #ratio} of the range as the stream computed it; null without a ratio or where its denominator is 0. */
    public BigDecimal streamRatio() {
        return ratio() == null ? null : set.ratio(ratio(), comparison.range().stream());
    }

    /** {@link #ratio} of the range as served after this run (a dry run: if applied). */
    public BigDecimal finalRatio() {
        return ratio() == null ? null : set.ratio(ratio(), finalTotals);
    }

    public long valuesCorrected() {
        return corrections.values().stream().mapToLong(Long::longValue).sum();
    }
}
