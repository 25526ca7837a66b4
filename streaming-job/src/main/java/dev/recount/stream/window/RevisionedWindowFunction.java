package dev.recount.stream.window;

import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.JobTotals;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Adds the window's key, bounds and revision to the aggregate (CONTRACT §3): the first firing is revision 1, each
 * later firing (an event within allowed lateness) is the previous revision + 1 and carries the full totals. The
 * revision lives in per-window state, cleared with the window.
 */
public final class RevisionedWindowFunction
        extends ProcessWindowFunction<MetricsAccumulator, StreamWindowMetricsTable.Row, Tuple2<String, String>, TimeWindow> {
    private static final long serialVersionUID = 1L;

    public static final String LATE_REFIRINGS_METRIC = "lateRefirings";
    public static final String FIRINGS_METRIC = "windowFirings";
    /** Accumulator: the largest window end this run fired; a finished --bounded run closes windows up to it. */
    public static final String MAX_WINDOW_END_ACCUMULATOR = "maxFiredWindowEnd";

    private static final ValueStateDescriptor<Integer> REVISION = new ValueStateDescriptor<>("revision", Types.INT);

    private transient Counter lateRefirings;
    private transient Counter firings;
    private transient LongMaximum maxWindowEnd;
    private transient LongCounter firingsTotal;
    private transient LongCounter lateRefiringsTotal;

    @Override
    public void open(OpenContext openContext) {
        lateRefirings = getRuntimeContext().getMetricGroup().counter(LATE_REFIRINGS_METRIC);
        firings = getRuntimeContext().getMetricGroup().counter(FIRINGS_METRIC);
        maxWindowEnd = new LongMaximum();
        getRuntimeContext().addAccumulator(MAX_WINDOW_END_ACCUMULATOR, maxWindowEnd);
        firingsTotal = JobTotals.counter(getRuntimeContext(), FIRINGS_METRIC);
        lateRefiringsTotal = JobTotals.counter(getRuntimeContext(), LATE_REFIRINGS_METRIC);
    }

    @Override
    public void process(Tuple2<String, String> key, Context ctx, Iterable<MetricsAccumulator> aggregates,
                        Collector<StreamWindowMetricsTable.Row> out) throws Exception {
        ValueState<Integer> revisionState = ctx.windowState().getState(REVISION);
        Integer previous = revisionState.value();
        int revision = previous == null ? 1 : previous + 1;
        revisionState.update(revision);
        firings.inc();
        firingsTotal.add(1L);
        if (revision > 1) {
            lateRefirings.inc();
            lateRefiringsTotal.add(1L);
        }

        TimeWindow window = ctx.window();
        maxWindowEnd.add(window.getEnd());
        MetricsAccumulator totals = aggregates.iterator().next();
        out.collect(new StreamWindowMetricsTable.Row(
                new WindowRow(new WindowKey(window.getStart(), key.f0, key.f1), window.getEnd(), totals.toMetrics()),
                revision));
    }

    @Override
    public void clear(Context ctx) {
        ctx.windowState().getState(REVISION).clear();
    }
}
