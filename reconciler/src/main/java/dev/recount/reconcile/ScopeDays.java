package dev.recount.reconcile;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The days (midnight to midnight in the run's time zone) a scope's windows start in, for grouping per campaign-day:
 * SQL finds a window's day with {@code width_bucket(window_start, starts)} (1 = {@code first}), a binary search in a
 * handful of instants instead of a time-zone conversion per row. A day is 23 or 25 hours across DST: the starts are
 * the zone's own midnights (as {@code (window_start AT TIME ZONE zone)::date} would cut them).
 *
 * @param startsMillis the start of each day from {@code first} on, ascending
 */
record ScopeDays(LocalDate first, List<Long> startsMillis) {
    ScopeDays {
        Objects.requireNonNull(first, "first");
        startsMillis = List.copyOf(startsMillis);
        if (startsMillis.isEmpty()) throw new IllegalArgumentException("startsMillis must not be empty");
    }

    static ScopeDays of(Scope scope, ZoneId zone) {
        LocalDate first = LocalDate.ofInstant(scope.from(), zone);
        LocalDate last = LocalDate.ofInstant(Instant.ofEpochMilli(scope.toMillis() - 1), zone);
        List<Long> starts = new ArrayList<>();
        for (LocalDate d = first; !d.isAfter(last); d = d.plusDays(1))
            starts.add(d.atStartOfDay(zone).toInstant().toEpochMilli());
        return new ScopeDays(first, starts);
    }

    /** The day of {@code width_bucket}'s answer. */
    LocalDate day(int bucket) {
        if (bucket < 1 || bucket > startsMillis.size()) {
            throw new IllegalArgumentException("day bucket " + bucket + " is outside 1.." + startsMillis.size());
        }
        return first.plusDays(bucket - 1L);
    }
}
