package dev.recount.batch;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneId;

/**
 * The range a nightly run recomputes: one calendar day in the configured time zone, {@code [midnight, next
 * midnight)}, as UTC instants. A day is 23 or 25 hours long when daylight saving time starts or ends, and the
 * range follows the clock, not a fixed 24 h. When midnight in the zone is not a window boundary (a zone offset
 * like +05:45 with hourly windows), a window belongs to the day its start falls in: both bounds round up to the
 * next window start, so consecutive days tile the time line without gaps or overlaps. With several metric sets, to
 * the next instant that starts a window of every set (their windows are aligned to the epoch, so that is the next
 * multiple of the least common multiple of their sizes): one range, whole windows for each.
 */
public final class NightlyRange {
    private NightlyRange() {}

    public static TimeRange forDate(LocalDate date, ZoneId zone, MetricSets sets) {
        long common = 1;
        for (MetricSet s : sets.sets()) {
            long size = s.windows().sizeMillis();
            common = Math.multiplyExact(common / gcd(common, size), size);
        }
        return forDate(date, zone, new WindowAlignment(common));
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    public static TimeRange forDate(LocalDate date, ZoneId zone, WindowAlignment windows) {
        long dayStart = date.atStartOfDay(zone).toInstant().toEpochMilli();
        long nextDayStart = date.plusDays(1).atStartOfDay(zone).toInstant().toEpochMilli();
        return new TimeRange(ceilToWindow(dayStart, windows), ceilToWindow(nextDayStart, windows));
    }

    /** "The previous day": yesterday in {@code zone} as of {@code clock}. */
    public static LocalDate previousDay(Clock clock, ZoneId zone) {
        return LocalDate.now(clock.withZone(zone)).minusDays(1);
    }

    private static long ceilToWindow(long millis, WindowAlignment windows) {
        return windows.isAligned(millis) ? millis : windows.windowEnd(millis);
    }
}
