package dev.recount.reconcile;

import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * The outcome of one successful reconciliation (or dry run): per metric set it reconciled, what it found and did,
 * and the sets it was asked for that no batch run covered.
 *
 * @param dryRun     nothing was applied: each set's keysFinalized, corrections and finalTotals are what the run would
 *                   have done and served
 * @param verdict    beyond tolerance when any set's is
 * @param sets       the sets reconciled, in the definitions' order
 * @param notCovered per set the run was asked for but could not reconcile, why (no succeeded batch run of that set
 *                   covers the range), in the definitions' order
 * @param reportDir  the run's report directory
 */
public record RunResult(
        long runId,
        Scope scope,
        boolean dryRun,
        Verdict verdict,
        List<SetResult> sets,
        Map<String, String> notCovered,
        Path reportDir,
        Timings timings) {
    public RunResult {
        sets = List.copyOf(sets);
        notCovered = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(notCovered));
    }

    /** The result of metric set {@code name}. */
    public SetResult set(String name) {
        return sets.stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new NoSuchElementException("run " + runId + " did not reconcile set " + name));
    }

    /** Keys finalized or changed over every set. */
    public long keysFinalized() {
        return sets.stream().mapToLong(SetResult::keysFinalized).sum();
    }

    /** Correction-log entries per reason over every set. */
    public Map<CorrectionLogTable.Reason, Long> corrections() {
        Map<CorrectionLogTable.Reason, Long> all = new EnumMap<>(CorrectionLogTable.Reason.class);
        for (SetResult s : sets) s.corrections().forEach((reason, n) -> all.merge(reason, n, Long::sum));
        return all;
    }

    public long valuesCorrected() {
        return sets.stream().mapToLong(SetResult::valuesCorrected).sum();
    }

    /**
     * Wall time of the phases, for the benchmark and the log: the statements that compare, finalize and log; the check
     * of the serving views; the report; and the whole run.
     */
    public record Timings(Duration reconcile, Duration check, Duration report, Duration total) {}
}
