package dev.recount.core.metrics;

import dev.recount.core.event.AdEvent;
import java.io.Serializable;

/**
 * Running sums for one window key. Mutable on purpose: Flink's AggregateFunction adds to one accumulator per
 * key and window, and allocating per event would dominate the cost. {@code Math.addExact} turns an overflow
 * into an error instead of a wrong number finance would sign off on.
 */
public final class MetricsAccumulator implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final Metric[] METRICS = Metric.values();

    /** Indexed by {@link Metric#ordinal()}. Public for Flink's POJO serializer. */
    public long[] sums = new long[METRICS.length];

    public MetricsAccumulator add(AdEvent e) {
        for (Metric m : METRICS) {
            sums[m.ordinal()] = Math.addExact(sums[m.ordinal()], m.contribution(e));
        }
        return this;
    }

    public MetricsAccumulator merge(MetricsAccumulator other) {
        for (int i = 0; i < sums.length; i++) {
            sums[i] = Math.addExact(sums[i], other.sums[i]);
        }
        return this;
    }

    public WindowMetrics toMetrics() {
        return new WindowMetrics(sums[Metric.IMPRESSIONS.ordinal()], sums[Metric.CLICKS.ordinal()],
                sums[Metric.CONVERSIONS.ordinal()], sums[Metric.SPEND_MICROS.ordinal()], sums[Metric.EVENTS.ordinal()]);
    }
}
