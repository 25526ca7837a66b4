package dev.recount.core.metrics;

import java.io.Serializable;

/** The five metric values of one window key (CONTRACT §2). */
public record WindowMetrics(long impressions, long clicks, long conversions, long spendMicros, long events)
        implements Serializable {

    public static final WindowMetrics ZERO = new WindowMetrics(0, 0, 0, 0, 0);

    public long get(Metric m) {
        return switch (m) {
            case IMPRESSIONS -> impressions;
            case CLICKS -> clicks;
            case CONVERSIONS -> conversions;
            case SPEND_MICROS -> spendMicros;
            case EVENTS -> events;
        };
    }

    public WindowMetrics plus(WindowMetrics o) {
        return new WindowMetrics(Math.addExact(impressions, o.impressions), Math.addExact(clicks, o.clicks),
                Math.addExact(conversions, o.conversions), Math.addExact(spendMicros, o.spendMicros),
                Math.addExact(events, o.events));
    }
}
