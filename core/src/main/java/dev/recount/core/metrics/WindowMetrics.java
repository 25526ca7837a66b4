package dev.recount.core.metrics;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Objects;

/**
 * The five metric values of one window key (CONTRACT §2). Spend is a {@link BigInteger}: a window's spend may
 * exceed {@code Long.MAX_VALUE} micros (two events of the largest cost already do), and finance signs it.
 *
 * <p>{@link #get(Metric)} gives every metric as a {@link BigInteger}, so code that treats the metrics alike
 * (reports, diffs, JSON) is exact without asking which one it holds; {@link #count(Metric)} gives a count as
 * the long it is stored as.
 */
public record WindowMetrics(long impressions, long clicks, long conversions, BigInteger spendMicros, long events)
        implements Serializable {

    public static final WindowMetrics ZERO = new WindowMetrics(0, 0, 0, 0, 0);

    public WindowMetrics {
        Objects.requireNonNull(spendMicros, "spendMicros");
    }

    /** With a spend that fits a long (tests, small totals). */
    public WindowMetrics(long impressions, long clicks, long conversions, long spendMicros, long events) {
        this(impressions, clicks, conversions, BigInteger.valueOf(spendMicros), events);
    }

    /** Any metric, exactly. */
    public BigInteger get(Metric m) {
        return m == Metric.SPEND_MICROS ? spendMicros : BigInteger.valueOf(count(m));
    }

    /** A count metric; spend is not a count (it may not fit a long): use {@link #spendMicros()} or {@link #get}. */
    public long count(Metric m) {
        return switch (m) {
            case IMPRESSIONS -> impressions;
            case CLICKS -> clicks;
            case CONVERSIONS -> conversions;
            case EVENTS -> events;
            case SPEND_MICROS ->
                throw new IllegalArgumentException("spend_micros is not a count: read it with get or spendMicros");
        };
    }

    public WindowMetrics plus(WindowMetrics o) {
        return new WindowMetrics(
                Math.addExact(impressions, o.impressions),
                Math.addExact(clicks, o.clicks),
                Math.addExact(conversions, o.conversions),
                spendMicros.add(o.spendMicros),
                Math.addExact(events, o.events));
    }
}
