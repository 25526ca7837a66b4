package dev.recount.tools.advise;

import dev.recount.core.window.EventTime;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.PriorityQueue;

/**
 * Replays a sample through the stream job's event-time rules to count what a setting would do to it: which events
 * arrive after their window first fired (late: the window fires again, revision + 1) and which arrive after
 * window end + allowed lateness (too late: backfill topic).
 *
 * <p>The rules mirror the job (CONTRACT §3): each partition's watermark is the largest event time it has seen
 * minus the out-of-orderness minus 1 ms; a partition without a valid event for {@code idleness} stops counting;
 * the job's watermark is the minimum over the counting partitions and never goes back. Records are replayed in
 * arrival order across partitions, arrival being the Kafka record timestamp: that is the live case, where the
 * job reads records as they are written. (A job catching up on a backlog sees the same order per partition but
 * a different interleaving, so it may fare better or worse.) The one late/too-late rule is core's
 * {@link EventTime#isTooLate}.
 */
final class WatermarkSimulation {
    private WatermarkSimulation() {}

    record Settings(Duration windowSize, Duration outOfOrderness, Duration allowedLateness, Duration idleness) {
        Settings {
            Objects.requireNonNull(windowSize, "windowSize");
            Objects.requireNonNull(outOfOrderness, "outOfOrderness");
            Objects.requireNonNull(allowedLateness, "allowedLateness");
            Objects.requireNonNull(idleness, "idleness");
            if (windowSize.isZero() || windowSize.isNegative())
                throw new IllegalArgumentException("windowSize must be positive, got " + windowSize);
            if (outOfOrderness.isNegative())
                throw new IllegalArgumentException("outOfOrderness must not be negative, got " + outOfOrderness);
            if (allowedLateness.isNegative())
                throw new IllegalArgumentException("allowedLateness must not be negative, got " + allowedLateness);
            if (idleness.isZero() || idleness.isNegative())
                throw new IllegalArgumentException("idleness must be positive, got " + idleness);
        }
    }

    /** How the events of a sample fared under one setting. {@code onTime + late + tooLate == events}. */
    record Outcome(long events, long onTime, long late, long tooLate) {
        double lateShare() {
            return events == 0 ? 0 : (double) late / events;
        }

        double tooLateShare() {
            return events == 0 ? 0 : (double) tooLate / events;
        }
    }

    static Outcome run(ArrivalSample sample, Settings s) {
        WindowAlignment windows = new WindowAlignment(s.windowSize().toMillis());
        long ooo = s.outOfOrderness().toMillis();
        long lateness = s.allowedLateness().toMillis();
        long idleness = s.idleness().toMillis();
        int n = sample.partitionCount();
        if (n == 0) return new Outcome(0, 0, 0, 0);

        int[] next = new int[n];
        long[] maxEventTs = new long[n];
        boolean[] seen = new boolean[n];
        long[] lastActivity = new long[n];
        // Every partition counts from the start of the replay, like a job whose partitions are all assigned at
        // start: one that has nothing yet holds the watermark back until it goes idle.
        Arrays.fill(lastActivity, sample.firstArrival());

        PriorityQueue<Integer> arrivals = new PriorityQueue<>((a, b) -> {
            int byTime = Long.compare(sample.recordTs(a)[next[a]], sample.recordTs(b)[next[b]]);
            return byTime != 0 ? byTime : Integer.compare(a, b);
        });
        for (int i = 0; i < n; i++) arrivals.add(i);

        long watermark = Long.MIN_VALUE;
        long onTime = 0;
        long late = 0;
        long tooLate = 0;
        while (!arrivals.isEmpty()) {
            int p = arrivals.poll();
            long arrival = sample.recordTs(p)[next[p]];
            long eventTs = sample.eventTs(p)[next[p]];

            // The watermark this event meets: from the partitions' state before it arrived.
            long candidate = Long.MAX_VALUE;
            boolean anyCounting = false;
            for (int q = 0; q < n; q++) {
                if (arrival - lastActivity[q] >= idleness) continue; // idle: does not hold the watermark back
                anyCounting = true;
                long own = seen[q] ? maxEventTs[q] - ooo - 1 : Long.MIN_VALUE;
                candidate = Math.min(candidate, own);
            }
            if (anyCounting && candidate > watermark) watermark = candidate;

            if (new EventTime(windows, lateness).isTooLate(eventTs, watermark)) {
                tooLate++;
            } else if (new EventTime(windows, lateness).hasFired(windows.windowStart(eventTs), watermark)) {
                late++; // its window fired already (watermark past its last millisecond) but lateness still covers it
            } else {
                onTime++;
            }

            maxEventTs[p] = seen[p] ? Math.max(maxEventTs[p], eventTs) : eventTs;
            seen[p] = true;
            lastActivity[p] = Math.max(lastActivity[p], arrival);
            next[p]++;
            if (next[p] < sample.recordTs(p).length) arrivals.add(p);
        }
        return new Outcome(onTime + late + tooLate, onTime, late, tooLate);
    }
}
