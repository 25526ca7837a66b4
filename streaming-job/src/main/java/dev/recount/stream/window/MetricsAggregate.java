package dev.recount.stream.window;

import dev.recount.core.metrics.MetricsAccumulator;
import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * The window maths: core's {@link MetricsAccumulator}, which applies each metric's definition
 * ({@link dev.recount.core.metrics.Metric#contribution}) shared with the batch layer; the de-dup operator adds the
 * events up into {@link WindowPartial}s, and this adds the partials of a window key (exact, spend included).
 */
public final class MetricsAggregate implements AggregateFunction<WindowPartial, MetricsAccumulator, MetricsAccumulator> {
    private static final long serialVersionUID = 1L;

    @Override
    public MetricsAccumulator createAccumulator() {
        return new MetricsAccumulator();
    }

    @Override
    public MetricsAccumulator add(WindowPartial partial, MetricsAccumulator acc) {
        return acc.merge(partial.totals);
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
