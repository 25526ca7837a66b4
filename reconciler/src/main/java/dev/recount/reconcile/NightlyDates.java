package dev.recount.reconcile;

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
 * (inclusive, oldest first) that no succeeded reconciliation covers exactly (midnight to midnight in the
 * configured zone). A day reconciled only as part of a longer range still counts as missing: the nightly
 * run also backfills it, and reruns are harmless.
 */
public final class NightlyDates {
    private NightlyDates() {}

    public static List<LocalDate> pending(Connection conn, LocalDate since, LocalDate until, ZoneId zone)
            throws SQLException {
        if (until.isBefore(since)) return List.of();
        Set<String> done = new HashSet<>();
        for (long[] r : ReconciliationRunsTable.succeededRangesWithin(
                conn,
                ScopeResolver.dayStart(since, zone).toEpochMilli(),
                ScopeResolver.dayStart(until.plusDays(1), zone).toEpochMilli())) {
            done.add(r[0] + "/" + r[1]);
        }
        return pending(since, until, zone, done);
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
