package dev.recount.batch;

import dev.recount.core.config.Durations;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
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
     * Only whole windows can be replaced: a range that cut a window of any of {@code sets} in two would store a partial
     * window as if it were the batch's exact answer. The message names the set, its window and the nearest bounds
     * aligned to it.
     */
    public TimeRange requireAligned(MetricSets sets) {
        for (MetricSet set : sets.sets()) {
            String what = "the " + Durations.format(set.window()) + " window of metric set " + set.name();
            requireAligned(set.windows(), what);
        }
        return this;
    }

    private void requireAligned(WindowAlignment windows, String what) {
        if (!windows.isAligned(fromMillis)) {
            throw new IllegalArgumentException("--from " + Instant.ofEpochMilli(fromMillis) + " is not aligned to "
                    + what + "; use " + Instant.ofEpochMilli(windows.windowStart(fromMillis)) + " or "
                    + Instant.ofEpochMilli(windows.windowEnd(fromMillis)));
        }
        if (!windows.isAligned(toMillis)) {
            throw new IllegalArgumentException("--to " + Instant.ofEpochMilli(toMillis) + " is not aligned to " + what
                    + "; use " + Instant.ofEpochMilli(windows.windowStart(toMillis)) + " or "
                    + Instant.ofEpochMilli(windows.windowEnd(toMillis)));
        }
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

    /** {@code ranges} with overlapping and adjacent ones merged; sorted. */
    public static List<TimeRange> merged(Collection<TimeRange> ranges) {
        List<TimeRange> sorted = new ArrayList<>(ranges);
        sorted.sort(java.util.Comparator.comparingLong(TimeRange::fromMillis));
        List<TimeRange> out = new ArrayList<>();
        for (TimeRange r : sorted) {
            TimeRange last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && r.fromMillis() <= last.toMillis()) {
                out.set(out.size() - 1, new TimeRange(last.fromMillis(), Math.max(last.toMillis(), r.toMillis())));
            } else {
                out.add(r);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "[" + Instant.ofEpochMilli(fromMillis) + ", " + Instant.ofEpochMilli(toMillis) + ")";
    }
}
