package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.window.WindowAlignment;
import dev.recount.stream.JobTotals;
import java.time.Duration;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by {@code event_id}: lets each id through at most once (CONTRACT §2) and sends events that are too late
 * for their window (CONTRACT §3) to the {@link #TOO_LATE} side output instead of the window.
 *
 * <p>An id is remembered until the watermark passes {@code event_ts + dedup horizon}. The horizon is at least
 * window + out-of-orderness + allowed lateness (core's {@code EventTimeSettings} enforces that), so by the time an
 * id is forgotten, any copy of it would be too late for its window anyway: it goes to the backfill topic, where
 * the batch layer de-duplicates, and is never counted twice by the stream.
 *
 * <p>"Too late" is core's {@link WindowAlignment#isTooLate} with this operator's current watermark. The window
 * operator downstream never has a higher watermark than this operator had when it sent the event, so whatever
 * passes here is on time or within lateness there too. Too-late ids are remembered as well, so a duplicate of
 * a too-late event is dropped rather than sent to the backfill topic twice.
 *
 * <p>{@code closedUntil}: after a finished {@code --bounded} run every window it flushed is final; a later run
 * treats windows ending at or before {@code closedUntil} as too late, as if the watermark were there already.
 */
public final class DedupAndRouteTooLate extends KeyedProcessFunction<Long, AdEvent, AdEvent> {
    private static final long serialVersionUID = 1L;

    public static final OutputTag<BackfillRecord> TOO_LATE =
            new OutputTag<>("too-late", TypeInformation.of(BackfillRecord.class));
    public static final String DUPLICATES_METRIC = "duplicatesDropped";
    public static final String TOO_LATE_METRIC = "tooLateEvents";

    private final WindowAlignment windows;
    private final long allowedLatenessMillis;
    private final long horizonMillis;
    /** The watermark this operator acts as if it had at least; Long.MIN_VALUE when there is no such floor. */
    private final long floorWatermark;

    private transient MapState<String, Boolean> seen;
    static final long SLOT_MILLIS = 10_000L;
    static final int BUCKETS = 256;

    /** Bench patch: key = (event-time slot of 10 s, id hash bucket); one cleanup timer per key instead of per id. */
    public static Long bucketKey(AdEvent e) {
        return Math.floorDiv(e.eventTs, SLOT_MILLIS) * BUCKETS + Math.floorMod(e.eventId.hashCode(), BUCKETS);
    }
    private transient Counter duplicates;
    private transient Counter tooLate;
    private transient LongCounter duplicatesTotal;
    private transient LongCounter tooLateTotal;

    /**
     * @param closedUntil windows ending at or before this (epoch ms) are final; {@code Long.MIN_VALUE} for none
     */
    public DedupAndRouteTooLate(WindowAlignment windows, Duration allowedLateness, Duration dedupHorizon,
                                long closedUntil) {
        this.windows = windows;
        this.allowedLatenessMillis = allowedLateness.toMillis();
        this.horizonMillis = dedupHorizon.toMillis();
        // isTooLate(ts) <=> windowEnd(ts) - 1 + lateness <= watermark, so a watermark of closedUntil - 1 + lateness
        // makes exactly the windows ending at or before closedUntil too late.
        this.floorWatermark = closedUntil == Long.MIN_VALUE ? Long.MIN_VALUE : closedUntil - 1 + allowedLatenessMillis;
    }

    @Override
    public void open(OpenContext openContext) {
        seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen-ids", Types.STRING, Types.BOOLEAN));
        duplicates = getRuntimeContext().getMetricGroup().counter(DUPLICATES_METRIC);
        tooLate = getRuntimeContext().getMetricGroup().counter(TOO_LATE_METRIC);
        duplicatesTotal = JobTotals.counter(getRuntimeContext(), DUPLICATES_METRIC);
        tooLateTotal = JobTotals.counter(getRuntimeContext(), TOO_LATE_METRIC);
    }

    @Override
    public void processElement(AdEvent event, Context ctx, Collector<AdEvent> out) throws Exception {
        if (seen.contains(event.eventId)) {
            duplicates.inc();
            duplicatesTotal.add(1L);
            return;
        }
        seen.put(event.eventId, Boolean.TRUE);
        long slotEnd = (Math.floorDiv(event.eventTs, SLOT_MILLIS) + 1) * SLOT_MILLIS - 1;
        ctx.timerService().registerEventTimeTimer(saturatedAdd(slotEnd, horizonMillis));

        long watermark = Math.max(ctx.timerService().currentWatermark(), floorWatermark);
        if (windows.isTooLate(event.eventTs, allowedLatenessMillis, watermark)) {
            tooLate.inc();
            tooLateTotal.add(1L);
            ctx.output(TOO_LATE, new BackfillRecord(event, windows.windowStart(event.eventTs),
                    windows.windowEnd(event.eventTs), watermark, event.topic, event.partition, event.offset));
            return;
        }
        out.collect(event);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<AdEvent> out) {
        seen.clear();
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
