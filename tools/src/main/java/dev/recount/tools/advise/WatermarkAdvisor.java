package dev.recount.tools.advise;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.tools.advise.WatermarkSimulation.Outcome;
import dev.recount.tools.advise.WatermarkSimulation.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Turns an {@link ArrivalSample} into watermark advice: the arrival-delay distribution per partition and overall,
 * the gaps between events per partition, a recommended setting, and what each candidate setting would do to
 * exactly this data. Pure maths: no Kafka, no clock.
 *
 * <p>Rules of the recommendation (each rounded up to a readable step, see {@link #roundUp}):
 * <ul>
 *   <li>{@code watermark.out-of-orderness} = p99 of the arrival delay (at least 1 s): at most about 1 % of events
 *       (those delayed beyond it, and then only if the delay also exceeds the rest of their window) reach a window
 *       that has fired and cost a re-firing, instead of every window being held back longer;</li>
 *   <li>{@code window.allowed-lateness} = p99.9 of the delay minus that out-of-orderness, so the two together
 *       cover 99.9 % of events and at most about 0.1 % go to the backfill topic;</li>
 *   <li>{@code watermark.idleness} = the largest p99.9 of the gaps between consecutive events on one partition
 *       (at least 1 s): ordinary gaps never mark a partition idle, while a real outage (the gaps above it) stops
 *       holding windows back after that long.</li>
 * </ul>
 */
final class WatermarkAdvisor {
    static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};
    static final Duration MIN_OUT_OF_ORDERNESS = Duration.ofSeconds(1);
    static final Duration MIN_IDLENESS = Duration.ofSeconds(1);

    /** Readable steps to round settings up to; beyond the last, whole days. */
    private static final long[] STEPS_MS = {
        100,
        200,
        500,
        1_000,
        2_000,
        5_000,
        10_000,
        15_000,
        30_000,
        60_000,
        120_000,
        300_000,
        600_000,
        900_000,
        1_800_000,
        3_600_000,
        7_200_000,
        10_800_000,
        21_600_000,
        43_200_000,
        86_400_000
    };

    private WatermarkAdvisor() {}

    /** Delays and gaps of one partition. {@code gaps} are between consecutive events in offset order, in record time. */
    record PartitionStats(int partition, Distribution delays, Distribution gaps) {}

    record Recommendation(Duration outOfOrderness, Duration allowedLateness, Duration idleness) {}

    /** One setting and what it would do to the sample. */
    record Candidate(String label, Settings settings, Outcome outcome) {}

    record Advice(
            List<PartitionStats> partitions,
            Distribution delays,
            Distribution gaps,
            Recommendation recommendation,
            List<Candidate> candidates,
            long largestGapP999) {}

    /**
     * @param current the configured settings: their window size is used throughout, and they are one candidate
     * @throws IllegalArgumentException when the sample has no events
     */
    static Advice advise(ArrivalSample sample, EventTimeSettings current) {
        Objects.requireNonNull(current, "current");
        if (sample.events() == 0) throw new IllegalArgumentException("the sample has no valid events to learn from");

        List<PartitionStats> partitions = new ArrayList<>();
        // Histograms, not sorted copies: their memory stays the same however many events the sample holds.
        Distribution delays = new Distribution();
        Distribution gaps = new Distribution();
        long largestGapP999 = 0;
        for (int i = 0; i < sample.partitionCount(); i++) {
            long[] rec = sample.recordTs(i);
            long[] ev = sample.eventTs(i);
            Distribution partitionDelays = new Distribution();
            Distribution partitionGaps = new Distribution();
            for (int k = 0; k < rec.length; k++) {
                long delay = rec[k] - ev[k];
                partitionDelays.record(delay);
                delays.record(delay);
                if (k > 0) {
                    // CreateTime stamps can step back within a partition; such a step is no gap at all.
                    long gap = Math.max(0, rec[k] - rec[k - 1]);
                    partitionGaps.record(gap);
                    gaps.record(gap);
                }
            }
            if (!partitionGaps.isEmpty()) largestGapP999 = Math.max(largestGapP999, partitionGaps.percentile(0.999));
            partitions.add(new PartitionStats(sample.partition(i), partitionDelays, partitionGaps));
        }
        Recommendation rec = recommend(delays, largestGapP999);
        return new Advice(
                partitions, delays, gaps, rec, candidates(sample, current, delays, gaps, rec), largestGapP999);
    }

    /**
     * @param delays         arrival delays of all events
     * @param largestGapP999 the largest per-partition p99.9 of gaps between consecutive events
     */
    static Recommendation recommend(Distribution delays, long largestGapP999) {
        Duration ooo = max(roundUp(delays.percentile(0.99)), MIN_OUT_OF_ORDERNESS);
        Duration lateness = latenessCovering(delays.percentile(0.999), ooo);
        Duration idleness = max(roundUp(largestGapP999), MIN_IDLENESS);
        return new Recommendation(ooo, lateness, idleness);
    }

    /** The allowed lateness that, with {@code outOfOrderness}, covers a delay of {@code delayMillis}. */
    static Duration latenessCovering(long delayMillis, Duration outOfOrderness) {
        return roundUp(Math.max(0, delayMillis - outOfOrderness.toMillis()));
    }

    /** The smallest readable step at or above {@code millis} (0 stays 0); whole days beyond a day. */
    static Duration roundUp(long millis) {
        if (millis <= 0) return Duration.ZERO;
        for (long step : STEPS_MS) {
            if (millis <= step) return Duration.ofMillis(step);
        }
        long day = 86_400_000L;
        return Duration.ofMillis(Math.floorDiv(millis + day - 1, day) * day);
    }

    /**
     * The settings worth comparing: the configured ones, the recommendation, out-of-orderness at other percentiles
     * (lateness adjusted so the pair still covers p99.9: trading re-firings against waiting), no lateness at all
     * (what the backfill alone would have to absorb), and idleness at the longest gap (never idle on this data).
     */
    private static List<Candidate> candidates(
            ArrivalSample sample,
            EventTimeSettings current,
            Distribution delays,
            Distribution gaps,
            Recommendation rec) {
        Duration window = current.windowSize();
        long p999 = delays.percentile(0.999);
        Map<Settings, String> settings = new LinkedHashMap<>();
        settings.putIfAbsent(
                new Settings(window, current.outOfOrderness(), current.allowedLateness(), current.idleness()),
                "current config");
        settings.putIfAbsent(
                new Settings(window, rec.outOfOrderness(), rec.allowedLateness(), rec.idleness()), "recommended");
        for (double q : new double[] {0.5, 0.9, 0.999}) {
            Duration ooo = max(roundUp(delays.percentile(q)), MIN_OUT_OF_ORDERNESS);
            settings.putIfAbsent(
                    new Settings(window, ooo, latenessCovering(p999, ooo), rec.idleness()),
                    "out-of-orderness at p" + percentLabel(q));
        }
        settings.putIfAbsent(
                new Settings(window, rec.outOfOrderness(), Duration.ZERO, rec.idleness()), "recommended, no lateness");
        if (!gaps.isEmpty()) {
            Duration never = max(roundUp(gaps.max() + 1), MIN_IDLENESS);
            settings.putIfAbsent(
                    new Settings(window, rec.outOfOrderness(), rec.allowedLateness(), never),
                    "idleness above the largest gap");
        }
        List<Candidate> out = new ArrayList<>();
        settings.forEach((s, label) -> out.add(new Candidate(label, s, WatermarkSimulation.run(sample, s))));
        return out;
    }

    /** 0.5 → "50", 0.999 → "99.9". */
    static String percentLabel(double q) {
        double pct = q * 100;
        return pct == Math.rint(pct) ? String.valueOf((long) pct) : String.valueOf(Math.round(pct * 10) / 10.0);
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
