package dev.recount.reconcile.report;

import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.Scope;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a run's report shows: the run, then each metric set it reconciled ({@link SetReport}), and the sets it
 * was asked for that no batch run covered.
 *
 * @param verdict    beyond tolerance when any set's is
 * @param dryRun     nothing was applied: corrections and final totals are what the run would do
 * @param notCovered per set not reconciled, why (in the definitions' order)
 */
public record ReportData(
        long runId,
        Scope scope,
        ZoneId zone,
        Instant generatedAt,
        Verdict verdict,
        boolean dryRun,
        List<SetReport> sets,
        Map<String, String> notCovered) {
    public ReportData {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(generatedAt, "generatedAt");
        Objects.requireNonNull(verdict, "verdict");
        sets = List.copyOf(sets);
        notCovered = Collections.unmodifiableMap(new LinkedHashMap<>(notCovered));
    }

    /** A run of the sets {@code sets}, every one of them covered. */
    public ReportData(
            long runId,
            Scope scope,
            ZoneId zone,
            Instant generatedAt,
            Verdict verdict,
            boolean dryRun,
            List<SetReport> sets) {
        this(runId, scope, zone, generatedAt, verdict, dryRun, sets, Map.of());
    }

    /**
     * Whether the report shows its sets one by one under their names, after an overview of all: unless the run is of
     * the default set alone, whose report reads as it did before metric sets existed.
     */
    public boolean perSet() {
        return perSet(sets.stream().map(SetReport::set).toList(), notCovered.keySet());
    }

    /**
     * Whether a run of {@code reconciled} (and {@code notCovered} left out) is shown set by set, in the report and on
     * the command line: every run but one of the default set alone.
     */
    public static boolean perSet(List<MetricSet> reconciled, Collection<String> notCovered) {
        return !(reconciled.size() == 1
                && notCovered.isEmpty()
                && reconciled.get(0).isDefault());
    }

    /** This data with {@code sets} instead (the same sets, with their largest differences). */
    public ReportData withSets(List<SetReport> sets) {
        return new ReportData(runId, scope, zone, generatedAt, verdict, dryRun, sets, notCovered);
    }

    /** The default set's data, or null when the run did not reconcile it. */
    public SetReport defaultSet() {
        return sets.stream().filter(s -> s.set().isDefault()).findFirst().orElse(null);
    }

    public long valuesCorrected() {
        return sets.stream().mapToLong(SetReport::valuesCorrected).sum();
    }
}
