package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.window.WindowAlignment;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.window.WindowPartial;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The safety net behind {@link DedupAndRouteTooLate}: events the window operator itself found too late (its late
 * side output) become backfill records too, so nothing is ever dropped silently. Should stay at zero; it is
 * counted separately ({@value #METRIC}) so that a non-zero value is visible. Flink's own
 * {@code numLateRecordsDropped} stays 0 once a late side output is set.
 *
 * <p>What reaches the window operator are partial sums ({@link WindowPartial}); only a partial sent on at once
 * carries its one event. A buffered sum cannot be late at the window: it leaves the de-dup operator before the
 * watermark that fires its window, and the de-dup operator never goes idle downstream (an idle input would no longer
 * hold the window operator's watermark back), so the window operator's watermark is never ahead of it. Should one
 * arrive late all the same, its events cannot be named one by one: it is counted and logged with its window key and
 * sums (the batch layer recomputes the window from the lake).
 */
public final class LateAtWindowToBackfill extends ProcessFunction<WindowPartial, BackfillRecord> {
    private static final long serialVersionUID = 2L;
    private static final Logger LOG = LoggerFactory.getLogger(LateAtWindowToBackfill.class);
    public static final String METRIC = JobTotals.TOO_LATE_AT_WINDOW;

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
    public void processElement(WindowPartial partial, Context ctx, Collector<BackfillRecord> out) {
        lateAtWindow.inc();
        lateAtWindowTotal.add(1L);
        AdEvent event = partial.event;
        if (event == null) {
            LOG.error(
                    "the partial sums {} arrived too late at the window operator (watermark {}); the stream misses "
                            + "them until the window is recomputed by the batch layer",
                    partial,
                    ctx.timerService().currentWatermark());
            return;
        }
        out.collect(new BackfillRecord(
                event,
                windows.windowStart(event.eventTs),
                windows.windowEnd(event.eventTs),
                ctx.timerService().currentWatermark(),
                event.topic,
                event.partition,
                event.offset));
    }
}
