package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.metrics.MetricsAccumulator;
import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * The window maths: core's {@link MetricsAccumulator}, which applies each metric's definition
 * ({@link dev.recount.core.metrics.Metric#contribution}) shared with the batch layer. Nothing else lives here.
 */
public final class MetricsAggregate implements AggregateFunction<AdEvent, MetricsAccumulator, MetricsAccumulator> {
    private static final long serialVersionUID = 1L;

    @Override
    public MetricsAccumulator createAccumulator() {
        return new MetricsAccumulator();
    }

    @Override
    public MetricsAccumulator add(AdEvent event, MetricsAccumulator acc) {
        return acc.add(event);
    }

    @Override
    public MetricsAccumulator getResult(MetricsAccumulator acc) {
        return acc;
    }

    @Override
    public MetricsAccumulator merge(MetricsAccumulator a, MetricsAccumulator b) {
        return a.merge(b);
    }
}
