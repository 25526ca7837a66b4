package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A run's diffs of one metric set per window and per value of the set's first dimension per day ({@link
 * ReconcileStatements#diffCounts}).
 *
 * @param windows  by window start
 * @param days     by first-dimension value and day
 * @param measures how many measures the set has (what a group without diffs differs by: zeros)
 */
record DiffCounts(Map<Long, Counts> windows, Map<GroupDay, Counts> days, int measures) {
    DiffCounts {
        windows = Map.copyOf(windows);
        days = Map.copyOf(days);
    }

    /** One value of the first dimension (the default set: a campaign) on one day. */
    record GroupDay(String value, LocalDate day) {}

    /**
     * How many keys of a group differ, by status, how many of those are beyond tolerance, and their summed stream −
     * batch difference per measure ({@code delta}: values in the set's measure order, negative where the batch has
     * more; only ever added to the batch's sums).
     */
    record Counts(
            long mismatched, long missingInStream, long missingInBatch, long beyondTolerance, MeasureValues delta) {
        Counts {
            Objects.requireNonNull(delta, "delta");
        }

        static Counts none(int measures) {
            return new Counts(0, 0, 0, 0, MeasureValues.zeros(measures));
        }
    }

    Counts window(long windowStartMillis) {
        Counts c = windows.get(windowStartMillis);
        return c == null ? Counts.none(measures) : c;
    }

    Counts day(GroupDay group) {
        Counts c = days.get(group);
        return c == null ? Counts.none(measures) : c;
    }

    static DiffCounts read(Connection conn, ReconcileStatements sql, long runId, ScopeDays days) throws SQLException {
        SetColumns columns = new SetColumns(sql.set());
        Map<Long, Counts> windows = new HashMap<>();
        Map<GroupDay, Counts> groupDays = new HashMap<>();
        try (PreparedStatement ps = sql.diffCounts(runId, days).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Counts c = new Counts(
                        rs.getLong("mismatched"),
                        rs.getLong("missing_in_stream"),
                        rs.getLong("missing_in_batch"),
                        rs.getLong("beyond_tolerance"),
                        columns.readValues(rs, "delta_"));
                if (rs.getInt("g") == 1) {
                    windows.put(Timestamps.read(rs, "window_start"), c);
                } else {
                    groupDays.put(
                            new GroupDay(
                                    rs.getString(ReconcileStatements.GROUP),
                                    days.day(rs.getInt(ReconcileStatements.DAY))),
                            c);
                }
            }
        }
        return new DiffCounts(windows, groupDays, columns.measureCount());
    }
}
