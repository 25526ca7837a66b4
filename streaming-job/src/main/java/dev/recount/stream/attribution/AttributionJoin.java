package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The event-time interval join of clicks and conversions to impressions, keyed by {@code request_id} ({@link #key}),
 * over the de-duplicated events that are not too late ({@code DedupAndRouteTooLate.ATTRIBUTION_EVENTS}); decisions
 * follow core's {@link AttributionRule} and leave as {@link AttributionDelta}s per window of the click.
 *
 * <ul>
 *   <li>A click or conversion is judged when it arrives, against the impressions of its request held so far. If one
 *       is in {@code [click_ts - window, click_ts]} it is attributed for good.</li>
 *   <li>If not, it is held: an impression may still arrive later (out of order, or late within the allowed lateness)
 *       and attribute it after all; then a delta moves it from unattributed to attributed. That is the only change a
 *       decision can undergo: impressions are only ever added. It is held until no impression at or before its event
 *       time can arrive any more: until the watermark passes its window's last millisecond + allowed lateness
 *       (later, such an impression is too late for its own window, which is no later than the click's, and goes to
 *       the backfill topic instead).</li>
 *   <li>An impression is held until no click it could attribute can arrive any more: until the watermark passes
 *       the last millisecond of the window of {@code impression_ts + window}, + allowed lateness.</li>
 *   <li>Without a request id a click is unattributed at once and nothing is held (such events share the key
 *       {@link #NO_REQUEST}, and hold no state under it); a conversion without one counts nothing.</li>
 * </ul>
 *
 * <p>State per request: the sorted event times of its impressions, and the clicks and conversions not attributed
 * yet. One event-time timer per expiry; when the last expires the request's state is gone. The deltas are summed
 * per window key downstream, which still holds the window when a delta arrives: a delta comes from an event that
 * is not too late for a window no later than the click's.
 */
public final class AttributionJoin extends KeyedProcessFunction<String, AdEvent, AttributionDelta> {
    private static final long serialVersionUID = 1L;
    /** The key of events without a request id: no request id is empty (core's validator refuses empty ids). */
    public static final String NO_REQUEST = "";

    public static final String ATTRIBUTED_LATER_METRIC = "attributionAttributedLater";

    private final AttributionRule rule;
    private final WindowAlignment windows;
    private final long allowedLatenessMillis;

    /** Event times of the request's impressions, ascending, each with the expiry of its own timer. */
    private transient ValueState<long[]> impressions;
    /** The request's clicks and conversions judged unattributed so far. */
    private transient ListState<AdEvent> unattributed;

    private transient Counter attributedLater;

    public AttributionJoin(AttributionRule rule, WindowAlignment windows, Duration allowedLateness) {
        this.rule = rule;
        this.windows = windows;
        this.allowedLatenessMillis = allowedLateness.toMillis();
    }

    /** The key this function must be keyed by. */
    public static String key(AdEvent e) {
        return e.requestId == null ? NO_REQUEST : e.requestId;
    }

    @Override
    public void open(OpenContext context) {
        impressions = getRuntimeContext()
                .getState(new ValueStateDescriptor<>(
                        "impression-times", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        unattributed = getRuntimeContext()
                .getListState(new ListStateDescriptor<>("unattributed", TypeInformation.of(AdEvent.class)));
        attributedLater = getRuntimeContext().getMetricGroup().counter(ATTRIBUTED_LATER_METRIC);
    }

    @Override
    public void processElement(AdEvent e, Context ctx, Collector<AttributionDelta> out) throws Exception {
        if (e.requestId == null) {
            if (e.eventType == EventType.CLICK) out.collect(AttributionDelta.decided(e, false, windows));
            return;
        }
        if (e.eventType == EventType.IMPRESSION) {
            addImpression(e, ctx, out);
        } else if (AttributionRule.isAttributable(e)) {
            judge(e, ctx, out);
        }
    }

    private void judge(AdEvent e, Context ctx, Collector<AttributionDelta> out) throws Exception {
        long[] times = impressions.value();
        boolean attributed = false;
        if (times != null) {
            for (long t : times) {
                if (rule.attributes(t, e.eventTs)) {
                    attributed = true;
                    break;
                }
            }
        }
        if (attributed || e.eventType == EventType.CLICK) { // an unattributed conversion counts nothing
            out.collect(AttributionDelta.decided(e, attributed, windows));
        }
        if (!attributed) {
            // A copy: with object reuse the input instance may be reused, and the heap backend keeps references.
            unattributed.add(e.copy());
            ctx.timerService().registerEventTimeTimer(heldUntil(e.eventTs));
        }
    }

    private void addImpression(AdEvent e, Context ctx, Collector<AttributionDelta> out) throws Exception {
        long[] times = impressions.value();
        if (times == null) {
            times = new long[] {e.eventTs};
        } else if (Arrays.binarySearch(times, e.eventTs) < 0) {
            long[] grown = Arrays.copyOf(times, times.length + 1);
            grown[times.length] = e.eventTs;
            Arrays.sort(grown);
            times = grown;
        }
        impressions.update(times);
        ctx.timerService().registerEventTimeTimer(impressionHeldUntil(e.eventTs));

        Iterable<AdEvent> waiting = unattributed.get();
        if (waiting == null) return;
        List<AdEvent> still = new ArrayList<>();
        boolean changed = false;
        for (AdEvent c : waiting) {
            if (rule.attributes(e.eventTs, c.eventTs)) {
                out.collect(AttributionDelta.attributedLater(c, windows));
                attributedLater.inc();
                changed = true;
            } else {
                still.add(c);
            }
        }
        if (changed) unattributed.update(still);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<AttributionDelta> out) throws Exception {
        long[] times = impressions.value();
        if (times != null) {
            int keep = 0;
            for (long t : times) if (impressionHeldUntil(t) > timestamp) keep++;
            if (keep == 0) {
                impressions.clear();
            } else if (keep < times.length) {
                long[] left = new long[keep];
                int i = 0;
                for (long t : times) if (impressionHeldUntil(t) > timestamp) left[i++] = t;
                impressions.update(left);
            }
        }
        Iterable<AdEvent> waiting = unattributed.get();
        if (waiting != null) {
            List<AdEvent> still = new ArrayList<>();
            boolean dropped = false;
            for (AdEvent c : waiting) {
                if (heldUntil(c.eventTs) > timestamp) still.add(c);
                else dropped = true;
            }
            if (still.isEmpty()) {
                unattributed.clear();
            } else if (dropped) {
                unattributed.update(still);
            }
        }
    }

    /** When a click or conversion at {@code ts} can no longer be attributed: its window's last ms + lateness. */
    long heldUntil(long ts) {
        return saturatedAdd(windows.windowEnd(ts) - 1, allowedLatenessMillis);
    }

    /** When no click an impression at {@code ts} could attribute can arrive any more. */
    long impressionHeldUntil(long ts) {
        return heldUntil(saturatedAdd(ts, rule.windowMillis()));
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
