package dev.recount.core.sets;

import java.util.Locale;

/** The read-time aggregations over a set's windows that migrate creates as SQL functions (CONTRACT §4). */
public enum Rollup {
    /** {@code hourly_metrics(from, to)}: per hour in the recorded time zone. */
    HOURLY,
    /** {@code daily_metrics(from_date, to_date)}: per day in the recorded time zone. */
    DAILY,
    /** {@code sliding_metrics(minutes, from, to)} and the view {@code recent_sliding_metrics}. */
    SLIDING;

    public String word() {
        return name().toLowerCase(Locale.ROOT);
    }
}
