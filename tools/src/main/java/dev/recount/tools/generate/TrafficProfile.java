package dev.recount.tools.generate;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.sets.Attribute;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What synthetic traffic to generate. Defaults describe a plausible ad platform minute by minute: skewed
 * campaigns and channels, ~96% impressions, heavy-tailed arrival delays, a little too-late, duplicate and
 * invalid traffic, and one partition that goes quiet for a while.
 *
 * @param start          event time of the first event (fixed by callers that need reproducible output)
 * @param span           event-time length of the main traffic; the ground truth's "main range"
 * @param tail           event-time length of thin valid traffic after the main range, so the watermark moves past
 *                       the main range's last window plus its allowed lateness and every main window closes
 * @param events         valid unique events in the main range
 * @param delayMedian    median arrival delay (Kafka record time − event time), log-normal
 * @param delayP99       99th percentile arrival delay
 * @param tooLateShare   share of valid events deliberately delayed beyond window + out-of-orderness + lateness
 * @param tooLateDelay   minimum delay of those events
 * @param duplicateShare share of valid events sent a second time (same bytes, later)
 * @param invalidShare   share of records (relative to valid events) that are invalid, spread over every class
 * @param quietFrom      fraction [0,1) of the main range at which one partition goes quiet
 * @param quietTo        fraction (quietFrom,1] at which it resumes; quietFrom == quietTo disables the phase
 * @param validation     the rules the stream job validates with: valid records must pass them, invalid ones fail
 *                       them for the intended reason (and the out-of-range samples are built from them)
 * @param attributes     the attributes the metric-sets file declares ({@code MetricSets.attributes()}): validated like
 *                       the contract's fields, so the generator sends values they accept, and breaks their rules in
 *                       invalid records of its own
 */
public record TrafficProfile(
        Instant start,
        Duration span,
        Duration tail,
        long events,
        int campaigns,
        long seed,
        int partitions,
        Duration delayMedian,
        Duration delayP99,
        double tooLateShare,
        Duration tooLateDelay,
        double duplicateShare,
        double invalidShare,
        double quietFrom,
        double quietTo,
        ValidationSettings validation,
        List<Attribute> attributes) {

    public TrafficProfile {
        Objects.requireNonNull(start, "start");
        Objects.requireNonNull(validation, "validation");
        attributes = List.copyOf(attributes);
        requirePositive(span, "span");
        Objects.requireNonNull(tail, "tail");
        if (events < 1) throw new IllegalArgumentException("events must be >= 1, got " + events);
        if (campaigns < 1) throw new IllegalArgumentException("campaigns must be >= 1, got " + campaigns);
        if (partitions < 1) throw new IllegalArgumentException("partitions must be >= 1, got " + partitions);
        requirePositive(delayMedian, "delayMedian");
        if (delayP99.compareTo(delayMedian) <= 0) {
            throw new IllegalArgumentException(
                    "delayP99 (" + delayP99 + ") must exceed delayMedian (" + delayMedian + ")");
        }
        requireShare(tooLateShare, "tooLateShare");
        requireShare(duplicateShare, "duplicateShare");
        requireShare(invalidShare, "invalidShare");
        if (quietFrom < 0 || quietTo > 1 || quietFrom > quietTo) {
            throw new IllegalArgumentException(
                    "quiet phase must satisfy 0 <= quietFrom <= quietTo <= 1, got " + quietFrom + ".." + quietTo);
        }
    }

    /** A profile with no attributes declared (the built-in metric sets: the default set only). */
    public TrafficProfile(
            Instant start,
            Duration span,
            Duration tail,
            long events,
            int campaigns,
            long seed,
            int partitions,
            Duration delayMedian,
            Duration delayP99,
            double tooLateShare,
            Duration tooLateDelay,
            double duplicateShare,
            double invalidShare,
            double quietFrom,
            double quietTo,
            ValidationSettings validation) {
        this(
                start,
                span,
                tail,
                events,
                campaigns,
                seed,
                partitions,
                delayMedian,
                delayP99,
                tooLateShare,
                tooLateDelay,
                duplicateShare,
                invalidShare,
                quietFrom,
                quietTo,
                validation,
                List.of());
    }

    public Instant mainEnd() {
        return start.plus(span);
    }

    public Instant tailEnd() {
        return mainEnd().plus(tail);
    }

    private static void requirePositive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isZero() || d.isNegative()) throw new IllegalArgumentException(name + " must be positive, got " + d);
    }

    private static void requireShare(double share, String name) {
        if (share < 0 || share >= 1) throw new IllegalArgumentException(name + " must be in [0, 1), got " + share);
    }
}
