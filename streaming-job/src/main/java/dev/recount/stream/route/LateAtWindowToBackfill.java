package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.window.WindowAlignment;
import dev.recount.stream.JobTotals;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The safety net behind {@link DedupAndRouteTooLate}: events the window operator itself found too late (its late
 * side output) become backfill records too, so nothing is ever dropped silently. Should stay at zero; it is
 * counted separately ({@value #METRIC}) so that a non-zero value is visible. Flink's own
 * {@code numLateRecordsDropped} stays 0 once a late side output is set.
 */
public final class LateAtWindowToBackfill extends ProcessFunction<AdEvent, BackfillRecord> {
    private static final long serialVersionUID = 1L;
    public static final String METRIC = "tooLateAtWindow";

    private final WindowAlignment windows;
    private transient Counter lateAtWindow;
    private transient LongCounter lateAtWindowTotal;

    public LateAtWindowToBackfill(WindowAlignment windows) {
        this.windows = windows;
    }

    @Override
    public void open(OpenContext openContext) {
        lateAtWindow = getRuntimeContext().getMetricGroup().counter(METRIC);
        lateAtWindowTotal = JobTotals.counter(getRuntimeContext(), METRIC);
    }

    @Override
    public void processElement(AdEvent event, Context ctx, Collector<BackfillRecord> out) {
        lateAtWindow.inc();
        lateAtWindowTotal.add(1L);
        out.collect(new BackfillRecord(event, windows.windowStart(event.eventTs), windows.windowEnd(event.eventTs),
                ctx.timerService().currentWatermark(), event.topic, event.partition, event.offset));
    }
}
