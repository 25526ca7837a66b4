package dev.recount.reconcile;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What each side of a scope holds, per window and per campaign-day, read by one statement without joining keys
 * ({@link ReconcileStatements#survey}): enough to tell which windows changed since they were last reconciled, and,
 * with the run's diffs, every group's totals.
 *
 * @param windows      by window start, every window any side has rows in
 * @param campaignDays every campaign-day the stream or the batch has rows in
 */
record ScopeSurvey(Map<Long, Window> windows, List<CampaignDay> campaignDays) {
    ScopeSurvey {
        windows = Map.copyOf(windows);
        campaignDays = List.copyOf(campaignDays);
    }

    /** One side's rows of a group: how many, their summed metrics and (per window) their fingerprint. */
    record Rows(long keys, WindowMetrics sums, long fingerprint) {
        static final Rows NONE = new Rows(0, WindowMetrics.ZERO, 0);

        Rows {
            Objects.requireNonNull(sums, "sums");
        }

        Side side() {
            return new Side(keys, fingerprint);
        }
    }

    /**
     * @param windowEndMillis the window's end as the stream or batch rows have it (0 when only finalized rows are left)
     * @param finalized       the window's rows in window_corrections
     */
    record Window(long windowStartMillis, long windowEndMillis, Rows stream, Rows batch, Side finalized) {
        /** Whether the stream or the batch has rows in it (a window with only finalized rows is not compared). */
        boolean compared() {
            return stream.keys() + batch.keys() > 0;
        }
    }

    record CampaignDay(String campaignId, LocalDate day, Rows stream, Rows batch) {}

    static ScopeSurvey read(Connection conn, Scope scope, ZoneId zone) throws SQLException {
        Map<Long, Rows> stream = new TreeMap<>(), batch = new TreeMap<>();
        Map<Long, Long> ends = new TreeMap<>();
        Map<Long, Side> finalized = new TreeMap<>();
        Map<String, CampaignDay> days = new TreeMap<>();
        try (PreparedStatement ps = ReconcileStatements.survey(scope, zone).prepare(conn); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String side = rs.getString("side");
                long keys = rs.getLong("keys");
                if (side.equals(ReconcileStatements.FINAL)) {
                    finalized.put(Timestamps.read(rs, "window_start"), new Side(keys, rs.getLong("fingerprint")));
                    continue;
                }
                Rows rows = new Rows(keys, MetricColumns.read(rs), rs.getInt("g") == 1 ? rs.getLong("fingerprint") : 0);
                boolean isStream = side.equals(ReconcileStatements.STREAM);
                if (rs.getInt("g") == 1) {
                    long w = Timestamps.read(rs, "window_start");
                    (isStream ? stream : batch).put(w, rows);
                    ends.merge(w, Timestamps.read(rs, "window_end"), Math::max);
                } else {
                    String campaign = rs.getString("campaign_id");
                    LocalDate day = rs.getObject("day", LocalDate.class);
                    days.merge(day + "\u0000" + campaign, isStream ? new CampaignDay(campaign, day, rows, Rows.NONE)
                                    : new CampaignDay(campaign, day, Rows.NONE, rows),
                            (a, b) -> new CampaignDay(campaign, day, isStream ? rows : a.stream(), isStream ? a.batch() : rows));
                }
            }
        }
        Map<Long, Window> windows = new TreeMap<>();
        for (Long w : union(stream.keySet(), batch.keySet(), finalized.keySet())) {
            windows.put(w, new Window(w, ends.getOrDefault(w, 0L), stream.getOrDefault(w, Rows.NONE),
                    batch.getOrDefault(w, Rows.NONE), finalized.getOrDefault(w, Side.EMPTY)));
        }
        return new ScopeSurvey(windows, new ArrayList<>(days.values()));
    }

    @SafeVarargs
    private static List<Long> union(java.util.Set<Long>... sets) {
        java.util.TreeSet<Long> all = new java.util.TreeSet<>();
        for (var s : sets) all.addAll(s);
        return new ArrayList<>(all);
    }
}
