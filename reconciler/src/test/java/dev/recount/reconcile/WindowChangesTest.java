package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.ReconciledWindowsTable;
import dev.recount.db.tables.ReconciledWindowsTable.Row;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WindowChangesTest {
    static final long W0 = Instant.parse("2026-11-28T00:00:00Z").toEpochMilli();
    static final long W1 = W0 + 60_000, W2 = W0 + 120_000;
    static final Scope DAY = new Scope(W0, W0 + 86_400_000, null, null, "date 2026-11-28");

    static ScopeSurvey.Window window(long start, Side stream, Side batch, Side finalized) {
        ScopeSurvey.Ends ends = new ScopeSurvey.Ends(start + 60_000, start + 60_000);
        return new ScopeSurvey.Window(
                start,
                stream,
                ends,
                batch,
                ends,
                new ScopeSurvey.Rows(batch.keys(), MeasureValues.zeros(5)),
                finalized);
    }

    static ScopeSurvey survey(ScopeSurvey.Window... windows) {
        Map<Long, ScopeSurvey.Window> byStart = new java.util.TreeMap<>();
        for (ScopeSurvey.Window w : windows) byStart.put(w.windowStartMillis(), w);
        return new ScopeSurvey(byStart, List.of(), false, 5);
    }

    /** How many statements had written window_corrections when the test's windows were recorded. */
    static final long WRITES = 5;

    /** A window recorded by run {@code runId} with the current row hash. */
    static Row row(long start, Side stream, Side batch, Side finalized, long runId) {
        return new Row(start, stream, batch, finalized, runId, ReconcileStatements.FINGERPRINT_VERSION, WRITES, null);
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
                W0,
                new Row(W0, s, b, f, 4, ReconcileStatements.FINGERPRINT_VERSION - 1, WRITES, null),
                W1,
                row(W1, s, b, f, 4));

        WindowChanges changes = WindowChanges.of(now, recorded);

        assertThat(changes.changed()).containsExactly(W0);
        assertThat(changes.unchanged()).isEqualTo(Map.of(W1, 4L));
    }

    @Test
    void theFinalizedSideIsTakenAsRecordedOnlyWhenNothingWroteWindowCorrectionsSinceEveryWindowWasRecorded() {
        Side s = new Side(5, 1), b = new Side(5, 2), f = new Side(6, 3);
        // W2: only finalized rows (neither side has it any more), recorded by the run that saw it.
        Map<Long, Row> recorded = Map.of(
                W0, row(W0, s, b, f, 4), W1, row(W1, s, b, Side.EMPTY, 4), W2, row(W2, Side.EMPTY, Side.EMPTY, f, 4));
        Set<Long> both = Set.of(W0, W1);

        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, recorded, WRITES))
                .as("nothing wrote since: every window's recorded finalized side")
                .isEqualTo(Map.of(W0, f, W2, f));
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, recorded, WRITES + 1))
                .as("a statement wrote window_corrections since")
                .isNull();
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, Set.of(W0, W1, W0 + 180_000), both, recorded, WRITES))
                .as("a window never recorded")
                .isNull();
        Map<Long, Row> oneOlder = new java.util.HashMap<>(recorded);
        oneOlder.put(W1, new Row(W1, s, b, Side.EMPTY, 4, ReconcileStatements.FINGERPRINT_VERSION, WRITES - 1, null));
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, oneOlder, WRITES))
                .as("one window recorded before a later write")
                .isNull();
        oneOlder.put(W1, new Row(W1, s, b, Side.EMPTY, 4, ReconcileStatements.FINGERPRINT_VERSION, null, null));
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, oneOlder, WRITES))
                .as("recorded before writes were counted")
                .isNull();
        oneOlder.put(W1, new Row(W1, s, b, Side.EMPTY, 4, ReconcileStatements.FINGERPRINT_VERSION - 1, WRITES, null));
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, oneOlder, WRITES))
                .as("recorded with another row hash")
                .isNull();
        assertThat(ScopeSurvey.finalizedAsRecorded(DAY, both, both, Map.of(), 0))
                .as("nothing recorded (a first run)")
                .isNull();
    }

    static final ReconciledWindowsTable.Survey READ = new ReconciledWindowsTable.Survey(
            W0 + 60_000, W0 + 60_000, W0 + 60_000, W0 + 60_000, MeasureValues.of(7, 3, 1, 5_000_000, 11));

    static Row surveyed(long start, Side stream, Side batch, Side finalized, ReconciledWindowsTable.Survey read) {
        return new Row(start, stream, batch, finalized, 4, ReconcileStatements.FINGERPRINT_VERSION, WRITES, read);
    }

    @Test
    void aRerunTakesTheWindowsAsRecordedOnlyWhenNothingWroteThemAndEveryOneWasRecordedWhole() {
        Side s = new Side(700, 11), b = new Side(690, 22), f = new Side(700, 33);
        Map<Long, Row> recorded = new java.util.TreeMap<>(Map.of(
                W0,
                surveyed(W0, s, b, f, READ),
                W1,
                surveyed(W1, Side.EMPTY, Side.EMPTY, Side.EMPTY, READ),
                W0 + 86_400_000,
                surveyed(W0 + 86_400_000, s, b, f, null)));

        Map<Long, ScopeSurvey.Window> windows = ScopeSurvey.recordedWindows(DAY, recorded, WRITES, false, 5);

        assertThat(windows)
                .as("a window of another day recorded before V21 does not matter")
                .isNotNull();
        assertThat(windows.keySet())
                .as("a window no side holds rows of is left out")
                .containsExactly(W0);
        ScopeSurvey.Window w = windows.get(W0);
        assertThat(w.stream()).isEqualTo(s);
        assertThat(w.batch()).isEqualTo(b);
        assertThat(w.finalized()).isEqualTo(f);
        assertThat(w.streamEnds()).isEqualTo(new ScopeSurvey.Ends(W0 + 60_000, W0 + 60_000));
        assertThat(w.batchRows()).isEqualTo(new ScopeSurvey.Rows(690, READ.batchSums()));

        assertThat(ScopeSurvey.recordedWindows(DAY, recorded, WRITES, true, 5))
                .as("window_writes names a window of the range")
                .isNull();
        assertThat(ScopeSurvey.recordedWindows(DAY, recorded, WRITES + 1, false, 5))
                .as("window_corrections written since")
                .isNull();
        assertThat(ScopeSurvey.recordedWindows(DAY, Map.of(), WRITES, false, 5))
                .as("nothing recorded")
                .isNull();
        recorded.put(W2, surveyed(W2, s, b, f, null));
        assertThat(ScopeSurvey.recordedWindows(DAY, recorded, WRITES, false, 5))
                .as("a window of the range recorded before V21")
                .isNull();
    }
}
