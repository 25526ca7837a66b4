package dev.recount.core.cli;

import dev.recount.core.config.Durations;
import dev.recount.core.config.Instants;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Objects;

/**
 * The first day of a catch-up ({@code --since}): a date ({@code 2026-11-20}), or a number of days back from today
 * ({@code 7d}: what a scheduled job needs, whose dates move on with every run).
 */
public final class Since {
    private final LocalDate date;
    private final long daysBack;

    private Since(LocalDate date, long daysBack) {
        this.date = date;
        this.daysBack = daysBack;
    }

    public static Since date(LocalDate date) {
        return new Since(Objects.requireNonNull(date, "date"), -1);
    }

    public static Since daysBack(long days) {
        if (days < 1) throw new IllegalArgumentException("a number of days back must be at least 1, got " + days);
        return new Since(null, days);
    }

    /** {@code 2026-11-20} or {@code 7d} (any duration of whole days: {@code P7D}, {@code 168h}). */
    public static Since parse(String text) {
        if (text.length() == 10 && Character.isDigit(text.charAt(0)) && text.charAt(4) == '-') {
            return date(Instants.parseDate(text));
        }
        Duration back;
        try {
            back = Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cannot read '" + text + "' as a date (2026-11-20) or a number of days back (7d)");
        }
        if (back.isNegative() || back.isZero() || !back.equals(Duration.ofDays(back.toDays()))) {
            throw new IllegalArgumentException("'" + text + "' is not a whole number of days back (e.g. 7d)");
        }
        return daysBack(back.toDays());
    }

    /** The first day, given today's date (in the settings' time-zone). */
    public LocalDate first(LocalDate today) {
        return date != null ? date : today.minusDays(daysBack);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Since s && Objects.equals(date, s.date) && daysBack == s.daysBack;
    }

    @Override
    public int hashCode() {
        return Objects.hash(date, daysBack);
    }

    @Override
    public String toString() {
        return date != null ? date.toString() : daysBack + "d";
    }
}
