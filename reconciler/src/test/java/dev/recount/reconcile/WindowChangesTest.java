package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.ReconciledWindowsTable.Row;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WindowChangesTest {
    static final long W0 = Instant.parse("2026-11-28T00:00:00Z").toEpochMilli();
    static final long W1 = W0 + 60_000, W2 = W0 + 120_000;
    static final Scope DAY = new Scope(W0, W0 + 86_400_000, null, null, "date 2026-11-28");

    static ScopeSurvey.Window window(long start, Side stream, Side batch, Side finalized) {
        ScopeSurvey.Ends ends = new ScopeSurvey.Ends(start + 60_000, start + 60_000);
        return new ScopeSurvey.Window(
                start, stream, ends, batch, ends, new ScopeSurvey.Rows(batch.keys(), WindowMetrics.ZERO), finalized);
    }

    static ScopeSurvey survey(ScopeSurvey.Window... windows) {
        Map<Long, ScopeSurvey.Window> byStart = new java.util.TreeMap<>();
        for (ScopeSurvey.Window w : windows) byStart.put(w.windowStartMillis(), w);
        return new ScopeSurvey(byStart, List.of());
    }

    /** A window recorded by run {@code runId} with the current row hash. */
    static Row row(long start, Side stream, Side batch, Side finalized, long runId) {
        return new Row(start, stream, batch, finalized, runId, ReconcileStatements.FINGERPRINT_VERSION);
    }

    @Test
    void aWindowIsUnchangedOnlyWhenAllThreeSidesAreAsRecorded() {
        Side s = new Side(700, 11), b = new Side(700, 22), f = new Side(700, 33);
        ScopeSurvey now =
                survey(window(W0, s, b, f), window(W1, new Side(700, 12), b, f), window(W2, s, b, new Side(699, 33)));
        Map<Long, Row> recorded = Map.of(W0, row(W0, s, b, f, 7), W1, row(W1, s, b, f, 7), W2, row(W2, s, b, f, 8));

        WindowChanges changes = WindowChanges.of(now, recorded);

        assertThat(changes.unchanged()).isEqualTo(Map.of(W0, 7L));
        assertThat(changes.changed()).containsExactly(W1, W2);
        Scope part = changes.changedPart(DAY).orElseThrow();
        assertThat(part.windowStarts()).containsExactly(W1, W2);
        assertThat(part.fromMillis()).isEqualTo(DAY.fromMillis());
    }

    @Test
    void aFirstRunReconcilesTheWholeScopeAndARerunWithNoChangeNothing() {
        Side s = new Side(1, 1), b = new Side(1, 2);
        ScopeSurvey now = survey(window(W0, s, b, Side.EMPTY), window(W1, s, b, Side.EMPTY));

        WindowChanges first = WindowChanges.of(now, Map.of());
        assertThat(first.changedPart(DAY)).containsSame(DAY);

        WindowChanges rerun =
                WindowChanges.of(now, Map.of(W0, row(W0, s, b, Side.EMPTY, 3), W1, row(W1, s, b, Side.EMPTY, 3)));
        assertThat(rerun.changed()).isEmpty();
        assertThat(rerun.changedPart(DAY)).isEmpty();
    }

    @Test
    void aWindowRecordedWithAnotherRowHashIsChangedEvenWithEqualFingerprints() {
        Side s = new Side(5, 1), b = new Side(5, 2), f = new Side(5, 3);
        ScopeSurvey now = survey(window(W0, s, b, f), window(W1, s, b, f));
        Map<Long, Row> recorded = Map.of(
                W0, new Row(W0, s, b, f, 4, ReconcileStatements.FINGERPRINT_VERSION - 1), W1, row(W1, s, b, f, 4));

        WindowChanges changes = WindowChanges.of(now, recorded);

        assertThat(changes.changed()).containsExactly(W0);
        assertThat(changes.unchanged()).isEqualTo(Map.of(W1, 4L));
    }
}
