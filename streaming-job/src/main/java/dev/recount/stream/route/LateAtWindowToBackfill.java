package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.window.SetPartial;
import java.util.List;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The safety net behind {@link DedupAndRouteTooLate}: events the window operator itself found too late for their set's
 * window (its late side output) become backfill records too, naming that one set, so nothing is ever dropped
 * silently. Should stay at zero; it is counted separately ({@value #METRIC}, in total and per set) so that a non-zero
 * value is visible.
 *
 * <p>What reaches the window operator are partial sums ({@link SetPartial}); only a partial sent on at once carries
 * its one event. A buffered sum cannot be late at the window: it leaves the de-dup operator before the watermark that
 * fires its window, and the de-dup operator never goes idle downstream (an idle input would no longer hold the window
 * operator's watermark back), so the window operator's watermark is never ahead of it. Should one arrive late all the
 * same, its events cannot be named one by one: it is counted and logged with its set, window key and sums (the batch
 * layer recomputes the window from the lake).
 */
public final class LateAtWindowToBackfill extends ProcessFunction<SetPartial, BackfillRecord> {
    private static final long serialVersionUID = 3L;
    private static final Logger LOG = LoggerFactory.getLogger(LateAtWindowToBackfill.class);
    public static final String METRIC = JobTotals.TOO_LATE_AT_WINDOW;

    private final JobSets sets;
    private transient Counter lateAtWindow;
    private transient Counter[] setLateAtWindow;
    private transient LongCounter lateAtWindowTotal;

    public LateAtWindowToBackfill(JobSets sets) {
        this.sets = sets;
    }

    @Override
    public void open(OpenContext openContext) {
        lateAtWindow = getRuntimeContext().getMetricGroup().counter(METRIC);
        setLateAtWindow = new Counter[sets.size()];
        for (int i = 0; i < sets.size(); i++) {
            setLateAtWindow[i] = JobTotals.setGroup(
                            getRuntimeContext().getMetricGroup(), sets.get(i).name())
                    .counter(METRIC);
        }
        lateAtWindowTotal = JobTotals.counter(getRuntimeContext(), METRIC);
    }

    @Override
    public void processElement(SetPartial partial, Context ctx, Collector<BackfillRecord> out) {
        lateAtWindow.inc();
        lateAtWindowTotal.add(1L);
        int position = sets.position(partial.set);
        if (position >= 0) setLateAtWindow[position].inc();
        AdEvent event = partial.event;
        if (event == null) {
            LOG.error(
                    "the partial sums {} arrived too late at the window operator (watermark {}); the stream misses "
                            + "them until the window is recomputed by the batch layer",
                    partial,
                    ctx.timerService().currentWatermark());
            return;
        }
        SetRules rules = sets.byName(partial.set);
        out.collect(new BackfillRecord(
                event,
                List.of(new SetWindow(partial.set, partial.windowStart, rules.windowEnd(partial.windowStart))),
                ctx.timerService().currentWatermark(),
                event.topic,
                event.partition,
                event.offset));
    }
}
