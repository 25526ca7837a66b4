package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongPredicate;

/**
 * What a metric set's {@code window_metrics} serves for the windows a run just reconciled key by key, checked without
 * reading the view: one scan of their {@code window_corrections} rows ({@link ReconcileStatements#finalRows}) and a lookup of the
 * keys only the stream has ({@link ReconcileStatements#streamKeysNotFinalized}). The view serves a window's
 * corrections that are not removed as final and hides every stream and batch row that has a correction, so it serves
 * exactly the batch as final, and nothing as not final, when per window the kept corrections have the batch's key
 * count, fingerprint (the same row hash: every key, window end and metric) and sums, and every key only the stream
 * has is corrected (removed); the stream's other keys are the batch's (the survey's stream key count is checked
 * against the batch's and the diffs). Anything else means the corrections and the batch disagree: the run fails
 * rather than tell finance numbers it cannot vouch for. The same scan gives the finalized side's count and
 * fingerprint that the run records, so nothing is read twice.
 */
final class FinalizedCheck {
    private FinalizedCheck() {}

    /** One window's corrections: those served as final, and the removed ones. */
    record Window(Side kept, MeasureValues keptSums, Side removed) {
        /** A window without corrections, of a set of {@code measures} measures. */
        static Window none(int measures) {
            return new Window(Side.EMPTY, MeasureValues.zeros(measures), Side.EMPTY);
        }

        /** All of the window's corrections, as {@link ReconcileStatements#finalFingerprints} reads them. */
        Side all() {
            return new Side(kept.keys() + removed.keys(), kept.fingerprint() ^ removed.fingerprint());
        }
    }

    /**
     * Checks the windows of {@code changed} (the part of the run reconciled key by key) and returns, per window that
     * has corrections, what they are now: read from {@code window_corrections}, or from the run's new partition before
     * it is attached (it holds every correction of {@code changed} and nothing else; attached, it serves them as they
     * are), all of which is read.
     *
     * @throws IllegalStateException when the corrections do not serve exactly the batch, or the new partition holds a
     *     window outside {@code changed}
     */
    static Map<Long, Window> check(
            Connection conn,
            ReconcileStatements sql,
            Scope changed,
            long runId,
            ScopeSurvey survey,
            Optional<NewPartition> newPartition)
            throws SQLException {
        Map<Long, Window> windows = read(
                conn,
                new SetColumns(sql.set()),
                newPartition.isPresent() ? sql.finalRowsOfNewPartition(newPartition.get()) : sql.finalRows(changed));
        String table = newPartition.map(NewPartition::name).orElse(sql.tables().windowCorrections());
        Window none = Window.none(survey.measures());
        LongPredicate held = changed.holdsWindow();
        for (long w : windows.keySet()) {
            if (!held.test(w)) {
                throw new IllegalStateException(
                        table + " holds window " + Instant.ofEpochMilli(w) + ", outside " + changed.label());
            }
        }
        for (ScopeSurvey.Window w : survey.windows().values()) {
            if (!held.test(w.windowStartMillis())) continue;
            Window f = windows.getOrDefault(w.windowStartMillis(), none);
            if (!f.kept().equals(w.batch())
                    || !f.keptSums().equals(w.batchRows().sums())) {
                throw new IllegalStateException("after corrections "
                        + sql.tables().windowMetrics() + " serves, for window "
                        + Instant.ofEpochMilli(w.windowStartMillis()) + ", "
                        + f.kept().keys() + " keys summing to "
                        + f.keptSums() + " as final (fingerprint " + f.kept().fingerprint() + "), but the batch has "
                        + w.batch().keys() + " keys summing to " + w.batchRows().sums() + " (fingerprint "
                        + w.batch().fingerprint() + ")");
            }
        }
        try (PreparedStatement ps =
                        sql.streamKeysNotFinalized(changed, runId, table).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            long notFinal = rs.getLong("n");
            if (notFinal != 0) {
                throw new IllegalStateException(
                        "after corrections " + sql.tables().windowMetrics() + " still serves "
                                + notFinal
                                + " keys only the stream has as not final");
            }
        }
        return windows;
    }

    private static Map<Long, Window> read(Connection conn, SetColumns columns, Sql finalRows) throws SQLException {
        Map<Long, Window> windows = new TreeMap<>();
        try (PreparedStatement ps = finalRows.prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                windows.put(
                        Timestamps.read(rs, "window_start"),
                        new Window(
                                new Side(rs.getLong("kept_keys"), rs.getLong("kept_fingerprint")),
                                columns.readValues(rs, ReconcileStatements.SUM),
                                new Side(rs.getLong("removed_keys"), rs.getLong("removed_fingerprint"))));
            }
        }
        return windows;
    }
}
