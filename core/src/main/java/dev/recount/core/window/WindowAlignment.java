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

    /** True when {@code tsMillis} is a window boundary; ranges given to the batch layer must be. */
    public boolean isAligned(long tsMillis) {
        return Math.floorMod(tsMillis, sizeMillis) == 0;
    }

    /**
     * An event is too late when the watermark has passed its window's last millisecond plus the allowed
     * lateness: Flink's rule ({@code window.maxTimestamp() + allowedLateness <= watermark}), stated once.
     */
    public boolean isTooLate(long eventTsMillis, long allowedLatenessMillis, long watermarkMillis) {
        long maxTimestamp = windowEnd(eventTsMillis) - 1;
        return maxTimestamp + allowedLatenessMillis <= watermarkMillis;
    }
}
