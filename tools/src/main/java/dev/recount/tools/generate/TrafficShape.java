package dev.recount.tools.generate;

import dev.recount.core.config.Durations;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.sets.Attribute;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * What the traffic looks like apart from how much and when: campaigns, arrival delays, the shares of too-late,
 * duplicate and invalid records, the quiet phase. {@code generate}'s options default to {@link #defaults()}; the demo
 * uses the defaults as they are.
 *
 * @param quiet the fractions of the main range during which one partition is quiet, {@code 0.4-0.6}, or {@code none}
 */
public record TrafficShape(
        int campaigns,
        String delayMedian,
        String delayP99,
        double tooLateShare,
        double duplicateShare,
        double invalidShare,
        String quiet) {
    // Strings, so that the command's options can name them as their defaults.
    static final String DEFAULT_CAMPAIGNS = "20";
    static final String DEFAULT_DELAY_MEDIAN = "2s";
    static final String DEFAULT_DELAY_P99 = "45s";
    static final String DEFAULT_TOO_LATE_SHARE = "0.01";
    static final String DEFAULT_DUPLICATE_SHARE = "0.02";
    static final String DEFAULT_INVALID_SHARE = "0.01";
    static final String DEFAULT_QUIET = "0.4-0.6";

    public static TrafficShape defaults() {
        return new TrafficShape(
                Integer.parseInt(DEFAULT_CAMPAIGNS),
                DEFAULT_DELAY_MEDIAN,
                DEFAULT_DELAY_P99,
                Double.parseDouble(DEFAULT_TOO_LATE_SHARE),
                Double.parseDouble(DEFAULT_DUPLICATE_SHARE),
                Double.parseDouble(DEFAULT_INVALID_SHARE),
                DEFAULT_QUIET);
    }

    /** Thin traffic after the main range long enough for its last windows to close: window + out-of-orderness + lateness + 30 s. */
    public static Duration closingTail(EventTimeSettings time) {
        return time.openFor().plusSeconds(30);
    }

    /**
     * The start, on a minute, of a main range of {@code span} whose {@code tail} has ended by {@code now}: a watermark
     * never runs ahead of the clock, so a tail still in the future would leave the range's last windows open.
     */
    public static Instant startClosedBy(Instant now, Duration span, Duration tail) {
        return now.truncatedTo(ChronoUnit.MINUTES).minus(span).minus(tail).truncatedTo(ChronoUnit.MINUTES);
    }

    /**
     * The profile of {@code events} valid events over {@code span} from {@code start}, then {@code tail} of thin
     * traffic, over {@code partitions} partitions, with the declared {@code attributes}.
     *
     * @throws IllegalArgumentException when a value is out of range (the message names it)
     */
    public TrafficProfile profile(
            EventTimeSettings time,
            Instant start,
            Duration span,
            Duration tail,
            long events,
            long seed,
            int partitions,
            List<Attribute> attributes) {
        double quietFrom = 0;
        double quietTo = 0;
        if (!"none".equalsIgnoreCase(quiet)) {
            String[] q = quiet.split("-");
            if (q.length != 2)
                throw new IllegalArgumentException("--quiet must look like 0.4-0.6 or be 'none', got '" + quiet + "'");
            quietFrom = Double.parseDouble(q[0]);
            quietTo = Double.parseDouble(q[1]);
        }
        // Too late means beyond window + out-of-orderness + lateness. Twice the out-of-orderness and lateness
        // keeps "intended too late" clear of the boundary even when partitions' watermarks lag each other, as
        // they do when a replay or demo pushes minutes of event time through in seconds.
        Duration tooLateDelay = time.windowSize()
                .plus(time.outOfOrderness().plus(time.allowedLateness()).multipliedBy(2));
        return new TrafficProfile(
                start,
                span,
                tail,
                events,
                campaigns,
                seed,
                partitions,
                Durations.parse(delayMedian),
                Durations.parse(delayP99),
                tooLateShare,
                tooLateDelay,
                duplicateShare,
                invalidShare,
                quietFrom,
                quietTo,
                time.validation(),
                attributes);
    }
}
