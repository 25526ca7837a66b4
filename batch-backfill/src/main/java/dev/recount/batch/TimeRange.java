package dev.recount.batch;

import dev.recount.core.config.Durations;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/** A half-open event-time range {@code [from, to)} in epoch milliseconds. */
public record TimeRange(long fromMillis, long toMillis) {
    public TimeRange {
        if (toMillis <= fromMillis) {
            throw new IllegalArgumentException("range must not be empty: --from " + Instant.ofEpochMilli(fromMillis)
                    + " is not before --to " + Instant.ofEpochMilli(toMillis));
        }
    }

    public static TimeRange of(Instant from, Instant to) {
        return new TimeRange(from.toEpochMilli(), to.toEpochMilli());
    }

    /**
     * Only whole windows can be replaced: a range that cut a window in two would store a partial window as if
     * it were the batch's exact answer. The message names the nearest aligned bounds.
     */
    public TimeRange requireAligned(WindowAlignment windows) {
        String size = Durations.format(Duration.ofMillis(windows.sizeMillis()));
        if (!windows.isAligned(fromMillis)) {
            throw new IllegalArgumentException("--from " + Instant.ofEpochMilli(fromMillis) + " is not aligned to the "
                    + size + " window size; use " + Instant.ofEpochMilli(windows.windowStart(fromMillis)) + " or "
                    + Instant.ofEpochMilli(windows.windowEnd(fromMillis)));
        }
        if (!windows.isAligned(toMillis)) {
            throw new IllegalArgumentException("--to " + Instant.ofEpochMilli(toMillis) + " is not aligned to the "
                    + size + " window size; use " + Instant.ofEpochMilli(windows.windowStart(toMillis)) + " or "
                    + Instant.ofEpochMilli(windows.windowEnd(toMillis)));
        }
        return this;
    }

    public boolean contains(long millis) {
        return millis >= fromMillis && millis < toMillis;
    }

    /** The windows named by their starts, as ranges, adjacent ones merged; sorted. */
    public static List<TimeRange> ofWindows(Collection<Long> windowStarts, WindowAlignment windows) {
        List<TimeRange> ranges = new ArrayList<>();
        long from = 0;
        long to = 0;
        boolean open = false;
        for (long start : new TreeSet<>(windowStarts)) {
            if (open && start == to) {
                to = start + windows.sizeMillis();
                continue;
            }
            if (open) ranges.add(new TimeRange(from, to));
            from = start;
            to = start + windows.sizeMillis();
            open = true;
        }
        if (open) ranges.add(new TimeRange(from, to));
        return ranges;
    }

    @Override
    public String toString() {
        return "[" + Instant.ofEpochMilli(fromMillis) + ", " + Instant.ofEpochMilli(toMillis) + ")";
    }
}
