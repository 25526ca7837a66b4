package dev.recount.core.window;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * The event-time rules of one window size (CONTRACT §3), stated once for every operator and layer: where an event's
 * window is, when it fires, and when an event is too late for it. The words, in code and docs alike:
 *
 * <ul>
 *   <li><b>on time</b>: the watermark has not reached the window's last millisecond; the event is in its first
 *       firing;</li>
 *   <li><b>late</b>: the window has fired ({@link #hasFired}) but the watermark has not passed its last millisecond
 *       plus the allowed lateness; the event re-fires it (revision + 1);</li>
 *   <li><b>too late</b> ({@link #isTooLate}): beyond that; the event goes to the backfill topic, and the window is
 *       <b>closed</b> ({@link #isClosed}): its state may be forgotten, nothing the stream does changes it again.</li>
 * </ul>
 *
 * Flink's rule, {@code window.maxTimestamp() + allowedLateness <= watermark}, with windows aligned to the epoch
 * ({@link WindowAlignment}). Timestamps are epoch milliseconds; the window of a valid event and its lateness never
 * overflow a long (validation keeps event_ts before the year 9999), and a watermark of {@code Long.MIN_VALUE} (none
 * yet) closes nothing.
 */
public record EventTime(WindowAlignment windows, long allowedLatenessMillis) implements Serializable {
    public EventTime {
        Objects.requireNonNull(windows, "windows");
        if (allowedLatenessMillis < 0) {
            throw new IllegalArgumentException("allowed lateness must not be negative, got " + allowedLatenessMillis);
        }
    }

    public EventTime(Duration window, Duration allowedLateness) {
        this(new WindowAlignment(window.toMillis()), allowedLateness.toMillis());
    }

    public long sizeMillis() {
        return windows.sizeMillis();
    }

    public long windowStart(long eventTsMillis) {
        return windows.windowStart(eventTsMillis);
    }

    public long windowEnd(long eventTsMillis) {
        return windows.windowEnd(eventTsMillis);
    }

    /** The last millisecond of the window starting at {@code windowStart}: Flink's {@code maxTimestamp()}. */
    public long lastMillis(long windowStart) {
        return windowStart + windows.sizeMillis() - 1;
    }

    /** Whether the window starting at {@code windowStart} has fired at {@code watermark} (its first firing is due). */
    public boolean hasFired(long windowStart, long watermark) {
        return lastMillis(windowStart) <= watermark;
    }

    /** The watermark at which the window starting at {@code windowStart} closes: its last millisecond + lateness. */
    public long closesAt(long windowStart) {
        return saturatedAdd(lastMillis(windowStart), allowedLatenessMillis);
    }

    /** Whether the window starting at {@code windowStart} is closed at {@code watermark}: too late for any event. */
    public boolean isClosed(long windowStart, long watermark) {
        return closesAt(windowStart) <= watermark;
    }

    /** Whether an event of {@code eventTsMillis} is too late at {@code watermark}: its window is closed. */
    public boolean isTooLate(long eventTsMillis, long watermark) {
        return isClosed(windowStart(eventTsMillis), watermark);
    }

    /**
     * The latest window start whose window has fired at {@code watermark} ({@link #hasFired}); windows starting at or
     * before it have fired. {@code Long.MIN_VALUE} when none has, {@code Long.MAX_VALUE} for the end-of-input mark.
     */
    public long lastFiredStart(long watermark) {
        if (watermark == Long.MAX_VALUE) return Long.MAX_VALUE;
        if (watermark < Long.MIN_VALUE + windows.sizeMillis()) return Long.MIN_VALUE;
        return watermark - windows.sizeMillis() + 1;
    }

    /**
     * The watermark that closes exactly the windows ending at or before {@code closedUntil} (what a finished
     * {@code --bounded} run leaves behind): {@code closedUntil - 1 + lateness}; {@code Long.MIN_VALUE} for none.
     */
    public long watermarkClosing(long closedUntil) {
        return closedUntil == Long.MIN_VALUE ? Long.MIN_VALUE : saturatedAdd(closedUntil - 1, allowedLatenessMillis);
    }

    /** This rule for another window size, the same allowed lateness (each metric set has its own windows). */
    public EventTime withWindow(Duration window) {
        return new EventTime(new WindowAlignment(window.toMillis()), allowedLatenessMillis);
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
