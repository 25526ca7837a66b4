package dev.recount.reconcile;

import dev.recount.db.tables.ReconciledWindowsTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which windows of a scope must be reconciled key by key, and which are exactly as the last applied run of each
 * left them: the same stream, batch and finalized key counts and fingerprints as it recorded, computed with the
 * same row hash ({@link ReconcileStatements#FINGERPRINT_VERSION}; a window recorded with another is changed). Such a window needs no
 * correction and no log entry, and its diffs are that run's.
 *
 * @param changed   window starts, ascending: never reconciled, or some side changed since
 * @param unchanged window start → the run whose diffs for it still hold
 */
record WindowChanges(List<Long> changed, Map<Long, Long> unchanged) {
    WindowChanges {
        changed = List.copyOf(changed);
        unchanged = Map.copyOf(unchanged);
    }

    static WindowChanges of(ScopeSurvey survey, Map<Long, ReconciledWindowsTable.Row> recorded) {
        List<Long> changed = new ArrayList<>();
        Map<Long, Long> unchanged = new TreeMap<>();
        for (ScopeSurvey.Window w : survey.windows().values()) {
            ReconciledWindowsTable.Row r = recorded.get(w.windowStartMillis());
            if (r != null
                    && r.fingerprintVersion() == ReconcileStatements.FINGERPRINT_VERSION
                    && r.stream().equals(w.stream())
                    && r.batch().equals(w.batch())
                    && r.finalized().equals(w.finalized())) {
                unchanged.put(w.windowStartMillis(), r.reconciliationRunId());
            } else {
                changed.add(w.windowStartMillis());
            }
        }
        changed.sort(null);
        return new WindowChanges(changed, unchanged);
    }

    /**
     * The part of {@code scope} to reconcile key by key: all of it when no window is unchanged (a first run: the
     * plain range, no list of windows to match), else just the changed windows. Empty when nothing changed.
     */
    java.util.Optional<Scope> changedPart(Scope scope) {
        if (changed.isEmpty()) return java.util.Optional.empty();
        if (unchanged.isEmpty()) return java.util.Optional.of(scope);
        return java.util.Optional.of(
                new Scope(scope.fromMillis(), scope.toMillis(), changed, scope.batchRunId(), scope.label()));
    }
}
