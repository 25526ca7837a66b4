package dev.recount.core.window;

import java.io.Serializable;

/**
 * Tumbling windows aligned to the epoch in UTC: {@code [start, start + size)}. The one place that maps an
 * event time to its window, used by the stream job's window assigner check, the batch aggregation and the
 * backfill records alike. {@code floorDiv} keeps pre-1970 timestamps in the right window.
 */
public record WindowAlignment(long sizeMillis) implements Serializable {
    public WindowAlignment {
        if (sizeMillis <= 0) throw new IllegalArgumentException("sizeMillis must be positive, got " + sizeMillis);
    }

    public long windowStart(long eventTsMillis) {
        return Math.floorDiv(eventTsMillis, sizeMillis) * sizeMillis;
    }

    public long windowEnd(long eventTsMillis) {
        return windowStart(eventTsMillis) + sizeMillis;
    }

    /**
     * {@link #windowStart} as a SQL expression over an epoch-millisecond column, for every engine that runs the
     * window maths as SQL (Spark in the batch layer; DuckDB and Spark SQL in the benchmarks):
     * {@code (ts - (((ts % size) + size) % size))}. SQL's {@code %} keeps the dividend's sign, like Java's, so the
     * outer {@code % size} makes it a floor modulo ({@code Math.floorMod}): pre-1970 times land in the right window
     * too. Integer maths throughout (no rounding of large epoch values), and {@code (ts % size) + size} cannot
     * overflow. Parenthesised, so it can stand anywhere an expression can.
     */
    public String sqlWindowStart(String eventTsColumn) {
        if (eventTsColumn == null || eventTsColumn.isBlank()) {
            throw new IllegalArgumentException("eventTsColumn must not be blank");
        }
        String ts = eventTsColumn.strip();
        return "(" + ts + " - (((" + ts + " % " + sizeMillis + ") + " + sizeMillis + ") % " + sizeMillis + "))";
    }

    /** True when {@code tsMillis} is a window boundary; ranges given to the batch layer must be. */
    public boolean isAligned(long tsMillis) {
        return Math.floorMod(tsMillis, sizeMillis) == 0;
    }
}
