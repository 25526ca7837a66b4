package dev.recount.reconcile;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.ReconciliationRunsTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which days `./recount nightly --since D` still has to run: every day from {@code since} to {@code until}
 * (inclusive, oldest first) that some metric set has no succeeded reconciliation of covering it exactly (midnight to
 * midnight in the configured zone). A day reconciled only as part of a longer range still counts as missing: the
 * nightly run also backfills it, and reruns are harmless. A set declared later makes the days since it was declared
 * pending until a reconciliation of them covers it too; a run reconciles every set, and for the sets whose days were
 * reconciled already it changes nothing.
 */
public final class NightlyDates {
    private NightlyDates() {}

    /** As {@link #pending(Connection, LocalDate, LocalDate, ZoneId, MetricSets)} for the default set alone. */
    public static List<LocalDate> pending(Connection conn, LocalDate since, LocalDate until, ZoneId zone)
            throws SQLException {
        return pending(conn, since, until, zone, List.of(MetricSet.DEFAULT));
    }

    /** The days some set of {@code sets} has no succeeded reconciliation of, oldest first. */
    public static List<LocalDate> pending(
            Connection conn, LocalDate since, LocalDate until, ZoneId zone, MetricSets sets) throws SQLException {
        return pending(
                conn,
                since,
                until,
                zone,
                sets.sets().stream().map(MetricSet::name).toList());
    }

    private static List<LocalDate> pending(
            Connection conn, LocalDate since, LocalDate until, ZoneId zone, List<String> sets) throws SQLException {
        if (until.isBefore(since)) return List.of();
        Set<LocalDate> dates = new java.util.TreeSet<>();
        for (String set : sets) {
            Set<String> done = new HashSet<>();
            for (long[] r : ReconciliationRunsTable.succeededRangesWithin(
                    conn,
                    ScopeResolver.dayStart(since, zone).toEpochMilli(),
                    ScopeResolver.dayStart(until.plusDays(1), zone).toEpochMilli(),
                    set)) {
                done.add(r[0] + "/" + r[1]);
            }
            dates.addAll(pending(since, until, zone, done));
        }
        return new ArrayList<>(dates);
    }

    /** @param done exact ranges already reconciled, as {@code "fromMillis/toMillis"} */
    static List<LocalDate> pending(LocalDate since, LocalDate until, ZoneId zone, Set<String> done) {
        List<LocalDate> dates = new ArrayList<>();
        for (LocalDate d = since; !d.isAfter(until); d = d.plusDays(1)) {
            String range = ScopeResolver.dayStart(d, zone).toEpochMilli() + "/"
                    + ScopeResolver.dayStart(d.plusDays(1), zone).toEpochMilli();
            if (!done.contains(range)) dates.add(d);
        }
        return dates;
    }
}
