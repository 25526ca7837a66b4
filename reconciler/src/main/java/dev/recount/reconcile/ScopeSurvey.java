package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.ReconciledWindowsTable;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongPredicate;

/**
 * What each side of one metric set's scope holds per window, and the batch per day of the set's first dimension (the
 * default set: per campaign-day), read side by side without joining keys ({@link ReconcileStatements#windowSurvey},
 * {@link ReconcileStatements#batchDays}, {@link ReconcileStatements#finalFingerprints}): enough to tell which
 * windows changed since they were last reconciled, and, with the run's diffs, every group's totals.
 *
 * @param windows             by window start, every window any side has rows in
 * @param days                the batch's rows per value of the first dimension per day
 * @param finalizedAsRecorded whether the finalized side was taken from {@code reconciled_windows} instead of read:
 *                            nothing has written {@code window_corrections} since every window was recorded
 * @param measures            how many measures the set has (what an empty group sums to)
 */
record ScopeSurvey(Map<Long, Window> windows, List<GroupDay> days, boolean finalizedAsRecorded, int measures) {
    ScopeSurvey {
        windows = Map.copyOf(windows);
        days = List.copyOf(days);
    }

    /** A group's batch rows: how many, and their summed measures. */
    record Rows(long keys, MeasureValues sums) {
        Rows {
            Objects.requireNonNull(sums, "sums");
        }

        /** No rows, of a set of {@code measures} measures. */
        static Rows none(int measures) {
            return new Rows(0, MeasureValues.zeros(measures));
        }
    }

    /** One side's rows of a window: count and fingerprint, and the first and last window end (0 without rows). */
    record Ends(long minMillis, long maxMillis) {
        static final Ends NONE = new Ends(0, 0);
    }

    record Window(
            long windowStartMillis,
            Side stream,
            Ends streamEnds,
            Side batch,
            Ends batchEnds,
            Rows batchRows,
            Side finalized) {
        /** Whether the stream or the batch has rows in it (a window with only finalized rows is not compared). */
        boolean compared() {
            return stream.keys() + batch.keys() > 0;
        }

        /** The window's end as its stream and batch rows have it (the later, should they disagree). */
        long windowEndMillis() {
            return Math.max(streamEnds.maxMillis(), batchEnds.maxMillis());
        }
    }

    /** One value of the set's first dimension (the default set: a campaign) on one day. */
    record GroupDay(String value, LocalDate day, Rows batch) {}

    /**
     * Reads the stream's and the batch's side of {@code scope}, and the finalized side unless it is known: when every
     * window of the scope was recorded ({@code recorded}) with the current row hash and with {@code finalWrites}
     * statements having written {@code window_corrections} — the number there are now — nothing has written it
     * since, and each window's finalized rows are the recorded ones.
     */
    static ScopeSurvey read(
            Connection conn,
            ReconcileStatements sql,
            Scope scope,
            ScopeDays days,
            Map<Long, ReconciledWindowsTable.Row> recorded,
            long finalWrites)
            throws SQLException {
        SetColumns columns = new SetColumns(sql.set());
        int measures = columns.measureCount();
        Map<Long, Side> stream = new TreeMap<>(), batch = new TreeMap<>();
        Map<Long, Ends> streamEnds = new TreeMap<>(), batchEnds = new TreeMap<>();
        Map<Long, Rows> batchRows = new TreeMap<>();
        for (String side : new String[] {ReconcileStatements.STREAM, ReconcileStatements.BATCH}) {
            boolean isStream = side.equals(ReconcileStatements.STREAM);
            try (PreparedStatement ps = sql.windowSurvey(scope, side).prepare(conn);
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long w = Timestamps.read(rs, "window_start");
                    (isStream ? stream : batch).put(w, new Side(rs.getLong("keys"), rs.getLong("fingerprint")));
                    (isStream ? streamEnds : batchEnds)
                            .put(
                                    w,
                                    new Ends(
                                            Timestamps.read(rs, "min_window_end"),
                                            Timestamps.read(rs, "max_window_end")));
                    if (!isStream)
                        batchRows.put(w, new Rows(rs.getLong("keys"), columns.readValues(rs, ReconcileStatements.SUM)));
                }
            }
        }
        List<GroupDay> groupDays = readDays(conn, sql, scope, days);
        Map<Long, Side> finalized = finalizedAsRecorded(scope, stream.keySet(), batch.keySet(), recorded, finalWrites);
        boolean asRecorded = finalized != null;
        if (!asRecorded) finalized = readFinalized(conn, sql, scope);
        TreeSet<Long> all = new TreeSet<>(stream.keySet());
        all.addAll(batch.keySet());
        all.addAll(finalized.keySet());
        Map<Long, Window> windows = new TreeMap<>();
        for (long w : all) {
            windows.put(
                    w,
                    new Window(
                            w,
                            stream.getOrDefault(w, Side.EMPTY),
                            streamEnds.getOrDefault(w, Ends.NONE),
                            batch.getOrDefault(w, Side.EMPTY),
                            batchEnds.getOrDefault(w, Ends.NONE),
                            batchRows.getOrDefault(w, Rows.none(measures)),
                            finalized.getOrDefault(w, Side.EMPTY)));
        }
        return new ScopeSurvey(windows, groupDays, asRecorded, measures);
    }

    /**
     * The scope's windows as recorded, or null when they must be read: when nothing has written a window of the scope
     * in the stream's or the batch's table since it was recorded ({@code written} false: {@code window_writes} names
     * none, V21) and the finalized side is as recorded ({@link #finalizedAsRecorded}), every window holds what the run
     * that recorded it read, provided that run recorded all of it (V21's columns; not before). A window the stream
     * and the batch both hold no rows of any more is left out, as a survey leaves it out.
     */
    static Map<Long, Window> recordedWindows(
            Scope scope,
            Map<Long, ReconciledWindowsTable.Row> recorded,
            long finalWrites,
            boolean written,
            int measures) {
        if (written) return null;
        LongPredicate held = scope.holdsWindow();
        Map<Long, ReconciledWindowsTable.Row> inScope = new TreeMap<>();
        for (ReconciledWindowsTable.Row r : recorded.values()) {
            long w = r.windowStartMillis();
            if (!held.test(w)) continue;
            if (r.survey() == null) return null;
            inScope.put(w, r);
        }
        if (inScope.isEmpty()) return null;
        Map<Long, Side> finalized = finalizedAsRecorded(scope, inScope.keySet(), Set.of(), inScope, finalWrites);
        if (finalized == null) return null;
        Map<Long, Window> windows = new TreeMap<>();
        for (ReconciledWindowsTable.Row r : inScope.values()) {
            long w = r.windowStartMillis();
            ReconciledWindowsTable.Survey v = r.survey();
            Window window = new Window(
                    w,
                    r.stream(),
                    r.stream().keys() == 0 ? Ends.NONE : new Ends(v.streamMinEndMillis(), v.streamMaxEndMillis()),
                    r.batch(),
                    r.batch().keys() == 0 ? Ends.NONE : new Ends(v.batchMinEndMillis(), v.batchMaxEndMillis()),
                    r.batch().keys() == 0
                            ? Rows.none(measures)
                            : new Rows(r.batch().keys(), v.batchSums()),
                    finalized.getOrDefault(w, Side.EMPTY));
            if (window.compared() || window.finalized().keys() > 0) windows.put(w, window);
        }
        return windows;
    }

    /**
     * The survey of a scope whose windows are as recorded ({@link #recordedWindows}): only the batch's days are read.
     */
    static ScopeSurvey withRecordedWindows(
            Connection conn, ReconcileStatements sql, Scope scope, ScopeDays days, Map<Long, Window> windows)
            throws SQLException {
        return new ScopeSurvey(
                windows,
                readDays(conn, sql, scope, days),
                true,
                sql.set().measures().size());
    }

    /**
     * The finalized side per window as recorded, or null when it must be read: some window of the scope (one the
     * stream or the batch has rows in, or a recorded one) was not recorded with the current row hash and with
     * {@code finalWrites} writes to {@code window_corrections}. A window with finalized rows only (neither stream
     * nor batch) was recorded by the run that surveyed it; rows written to a window since would be a write.
     */
    static Map<Long, Side> finalizedAsRecorded(
            Scope scope,
            Set<Long> streamWindows,
            Set<Long> batchWindows,
            Map<Long, ReconciledWindowsTable.Row> recorded,
            long finalWrites) {
        if (recorded.isEmpty()) return null;
        LongPredicate covered = scope.coversWindow();
        Map<Long, Side> finalized = new TreeMap<>();
        for (ReconciledWindowsTable.Row r : recorded.values()) {
            if (!covered.test(r.windowStartMillis())) continue;
            if (r.finalWrites() == null
                    || r.finalWrites() != finalWrites
                    || r.fingerprintVersion() != ReconcileStatements.FINGERPRINT_VERSION) return null;
            if (r.finalized().keys() > 0) finalized.put(r.windowStartMillis(), r.finalized());
        }
        for (Set<Long> side : List.of(streamWindows, batchWindows)) {
            for (long w : side) if (!recorded.containsKey(w)) return null;
        }
        return finalized;
    }

    private static List<GroupDay> readDays(Connection conn, ReconcileStatements sql, Scope scope, ScopeDays days)
            throws SQLException {
        SetColumns columns = new SetColumns(sql.set());
        List<GroupDay> groupDays = new ArrayList<>();
        try (PreparedStatement ps = sql.batchDays(scope, days).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                groupDays.add(new GroupDay(
                        rs.getString(ReconcileStatements.GROUP),
                        days.day(rs.getInt(ReconcileStatements.DAY)),
                        new Rows(rs.getLong("keys"), columns.readValues(rs, ReconcileStatements.SUM))));
            }
        }
        return groupDays;
    }

    /** Per window of {@code scope}: the key count and fingerprint of its rows in the set's window_corrections. */
    static Map<Long, Side> readFinalized(Connection conn, ReconcileStatements sql, Scope scope) throws SQLException {
        Map<Long, Side> finalized = new TreeMap<>();
        try (PreparedStatement ps = sql.finalFingerprints(scope).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                finalized.put(
                        Timestamps.read(rs, "window_start"), new Side(rs.getLong("keys"), rs.getLong("fingerprint")));
            }
        }
        return finalized;
    }

    /**
     * The distinct window sizes (window end − start, milliseconds) of the stream's or the batch's rows, as far as the
     * per-window first and last ends show them: exact when every window holds one size (two sizes in one window are
     * both seen; a third between them is not, which only matters for naming them in an error).
     */
    SortedSet<Long> windowSizes(boolean ofStream) {
        SortedSet<Long> sizes = new TreeSet<>();
        for (Window w : windows.values()) {
            if ((ofStream ? w.stream() : w.batch()).keys() == 0) continue;
            Ends e = ofStream ? w.streamEnds() : w.batchEnds();
            sizes.add(e.minMillis() - w.windowStartMillis());
            sizes.add(e.maxMillis() - w.windowStartMillis());
        }
        return sizes;
    }
}
