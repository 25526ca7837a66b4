package dev.recount.reconcile;

import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.Timestamps;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Turns what the command line asked for (a range, a date, a batch run) into a {@link Scope}. */
public final class ScopeResolver {
    private ScopeResolver() {}

    public static Scope range(Instant from, Instant to) {
        return Scope.range(from, to, "range");
    }

    /** A day from midnight to midnight in {@code zone} (23 or 25 hours across a DST change). */
    public static Scope date(LocalDate day, ZoneId zone) {
        return Scope.range(dayStart(day, zone), dayStart(day.plusDays(1), zone), "date " + day);
    }

    public static Instant dayStart(LocalDate day, ZoneId zone) {
        return day.atStartOfDay(zone).toInstant();
    }

    /**
     * The key of {@code batch_runs.details} under which an `affected` run records, per metric set, the windows it
     * recomputed: {@code {"sets": {"<set>": {"windows": ["<ISO window start>", ...]}}}}. A run that recorded only
     * {@link BatchRunsTable#DETAILS_WINDOWS} at the top (before metric sets) recomputed the default set's.
     */
    static final String DETAILS_SETS = "sets";

    /**
     * The windows of one succeeded batch run, of the metric sets it computed ({@code batch_runs.metric_sets}; none
     * named: the default set): its range for `range` and `nightly` runs; for an `affected` run, exactly the windows
     * it recomputed for each set, as it recorded them ({@code details}): its range may span windows it did not
     * recompute, and its rows cannot name them, since a row keeps the run that last changed it.
     *
     * @throws NotCoveredException if the run does not exist, has not succeeded, or recomputed no windows
     */
    public static Scope batchRun(Connection conn, long batchRunId) throws SQLException {
        BatchRunsTable.Run run = BatchRunsTable.find(conn, batchRunId)
                .orElseThrow(() -> new NotCoveredException("batch run " + batchRunId + " does not exist"));
        if (run.status() != BatchRunsTable.Status.SUCCEEDED) {
            throw new NotCoveredException("batch run " + batchRunId + " has status "
                    + run.status().wireName() + "; only a succeeded run can be reconciled against");
        }
        if (run.mode() != BatchRunsTable.Mode.AFFECTED) {
            if (run.rangeFrom() == null || run.rangeTo() == null) {
                throw new NotCoveredException("batch run " + batchRunId + " recorded no range");
            }
            return new Scope(
                    run.rangeFrom(),
                    run.rangeTo(),
                    null,
                    batchRunId,
                    "batch run " + batchRunId,
                    metricSets(conn, batchRunId),
                    null);
        }
        Map<String, List<Long>> windows = recordedWindows(conn, batchRunId);
        if (windows.isEmpty() || run.rangeTo() == null) {
            throw new NotCoveredException("batch run " + batchRunId + " (affected) recomputed no windows");
        }
        long first = windows.values().stream().mapToLong(w -> w.get(0)).min().orElseThrow();
        int count = windows.values().stream().mapToInt(List::size).sum();
        return new Scope(
                first,
                run.rangeTo(),
                null,
                batchRunId,
                "batch run " + batchRunId + " (" + count + " windows)",
                List.copyOf(windows.keySet()),
                windows);
    }

    /** The sets a batch run computed: {@code metric_sets}, or the default set for a run that names none. */
    private static List<String> metricSets(Connection conn, long batchRunId) throws SQLException {
        try (PreparedStatement ps =
                conn.prepareStatement("SELECT metric_sets FROM " + BatchRunsTable.TABLE + " WHERE run_id = ?")) {
            ps.setLong(1, batchRunId);
            try (ResultSet rs = ps.executeQuery()) {
                Array a = rs.next() ? rs.getArray(1) : null;
                return a == null ? List.of(MetricSet.DEFAULT) : Arrays.asList((String[]) a.getArray());
            }
        }
    }

    /**
     * Per set, the window starts (ascending) an `affected` run recorded as recomputed ({@link #DETAILS_SETS}), and
     * the default set's under {@link BatchRunsTable#DETAILS_WINDOWS} when it recorded them there (a run from before
     * metric sets).
     */
    static Map<String, List<Long>> recordedWindows(Connection conn, long batchRunId) throws SQLException {
        String sql = "SELECT s.key AS set_name, w.iso::timestamptz AS window_start FROM " + BatchRunsTable.TABLE
                + " r, jsonb_each(coalesce(r.details -> ?, '{}'::jsonb)) AS s(key, value),"
                + " jsonb_array_elements_text(s.value -> ?) AS w(iso) WHERE r.run_id = ?"
                + " UNION ALL SELECT ?, w.iso::timestamptz FROM " + BatchRunsTable.TABLE
                + " r, jsonb_array_elements_text(r.details -> ?) AS w(iso) WHERE r.run_id = ?"
                + " AND NOT coalesce(jsonb_exists(r.details -> ?, ?), false) ORDER BY 1, 2";
        Map<String, List<Long>> windows = new TreeMap<>();
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, DETAILS_SETS);
            ps.setString(2, BatchRunsTable.DETAILS_WINDOWS);
            ps.setLong(3, batchRunId);
            ps.setString(4, MetricSet.DEFAULT);
            ps.setString(5, BatchRunsTable.DETAILS_WINDOWS);
            ps.setLong(6, batchRunId);
            ps.setString(7, DETAILS_SETS);
            ps.setString(8, MetricSet.DEFAULT);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    windows.computeIfAbsent(rs.getString("set_name"), k -> new ArrayList<>())
                            .add(Timestamps.read(rs, "window_start"));
                }
            }
        }
        windows.values().removeIf(List::isEmpty);
        return windows;
    }
}
