package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetRules;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The event-time interval join of clicks and conversions to impressions, keyed by {@code request_id} ({@link #key}),
 * one operator for every metric set with attribution on, over the de-duplicated events the de-dup operator counted for
 * such a set ({@code DedupAndRouteTooLate.ATTRIBUTION_EVENTS}, each with the sets it counts in); decisions follow
 * core's {@link AttributionRule} and leave as {@link AttributionDelta}s per set, for the set's window of the click.
 *
 * <ul>
 *   <li>A click or conversion is judged when it arrives, against the impressions of its request held so far. If one
 *       is in {@code [click_ts - window, click_ts]} it is attributed for good, in each of its sets.</li>
 *   <li>If not, it is held with its sets: an impression may still arrive later (out of order, or late within the
 *       allowed lateness) and attribute it after all; then a delta moves it from unattributed to attributed in each of
 *       its sets whose window of it is not closed yet. That is the only change a decision can undergo: impressions are
 *       only ever added. It is held until its window of every one of its sets is closed (core's
 *       {@code EventTime#closesAt}: after that, an impression at or before it is too late for its own window in each of
 *       them and goes to the backfill topic instead).</li>
 *   <li>An impression is held until no click it could attribute can arrive any more: until the windows of
 *       {@code impression_ts + window} are closed in every set with attribution.</li>
 *   <li>Without a request id a click is unattributed at once and nothing is held (such events share the key
 *       {@link #NO_REQUEST}, and hold no state under it); a conversion without one counts nothing.</li>
 * </ul>
 *
 * <p>State per request: the sorted event times of its impressions, and the clicks and conversions not attributed
 * yet, each with its sets. One event-time timer per expiry; when the last expires the request's state is gone. An
 * operator rather than a {@code KeyedProcessFunction} so that, when it opens, it can turn the unattributed events of a
 * checkpoint of the release before metric sets (the state {@code unattributed}, under the same timers) into the
 * default set's, key by key. The timers keep the name the process function gave them.
 */
public final class AttributionJoin extends AbstractStreamOperator<AttributionDelta>
        implements OneInputStreamOperator<EventInSets, AttributionDelta>, Triggerable<String, VoidNamespace> {
    private static final long serialVersionUID = 2L;
    /** The key of events without a request id: no request id is empty (core's validator refuses empty ids). */
    public static final String NO_REQUEST = "";

    public static final String ATTRIBUTED_LATER_METRIC = "attributionAttributedLater";

    /** The timers' name: the one Flink's KeyedProcessOperator gave them when the join was a process function. */
    static final String TIMERS = "user-timers";

    static final String IMPRESSIONS_STATE = "impression-times";
    static final String HELD_STATE = "unattributed-in-sets";
    /** The release before metric sets: unattributed clicks and conversions of its one set, the default set. */
    static final String PREVIOUS_RELEASE_HELD_STATE = "unattributed";

    private final AttributionRule rule;
    private final JobSets sets;

    /** Event times of the request's impressions, ascending. */
    private transient ValueState<long[]> impressions;
    /** The request's clicks and conversions judged unattributed so far, each with its sets. */
    private transient ListState<EventInSets> held;

    private transient InternalTimerService<VoidNamespace> timers;
    private transient Counter attributedLater;
    /** The sets with attribution on. */
    private transient List<SetRules> attributing;

    public AttributionJoin(AttributionRule rule, JobSets sets) {
        this.rule = rule;
        this.sets = sets;
    }

    /** The key this operator must be keyed by. */
    public static String key(EventInSets e) {
        return e.event.requestId == null ? NO_REQUEST : e.event.requestId;
    }

    @Override
    public void open() throws Exception {
        super.open();
        attributing = sets.withAttribution();
        impressions = getPartitionedState(
                new ValueStateDescriptor<>(IMPRESSIONS_STATE, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        held = getPartitionedState(new ListStateDescriptor<>(HELD_STATE, EventInSets.TYPE));
        timers = getInternalTimerService(TIMERS, VoidNamespaceSerializer.INSTANCE, this);
        attributedLater = getMetricGroup().counter(ATTRIBUTED_LATER_METRIC);
        heldFromThePreviousRelease();
    }

    /**
     * A checkpoint of the release before metric sets holds unattributed events without sets: they were the default
     * set's. They are held on as the default set's (or dropped, without it), under the timers already set for them.
     */
    private void heldFromThePreviousRelease() throws Exception {
        ListState<AdEvent> previous = getPartitionedState(
                new ListStateDescriptor<>(PREVIOUS_RELEASE_HELD_STATE, TypeInformation.of(AdEvent.class)));
        List<String> keys;
        try (Stream<String> restored =
                this.<String>getKeyedStateBackend().getKeys(PREVIOUS_RELEASE_HELD_STATE, VoidNamespace.INSTANCE)) {
            keys = restored.toList();
        }
        SetRules defaultSet = sets.defaultSet();
        String[] inDefault =
                defaultSet != null && defaultSet.set().attribution() ? new String[] {defaultSet.name()} : null;
        for (String key : keys) {
            setCurrentKey(key);
            Iterable<AdEvent> events = previous.get();
            if (events != null && inDefault != null) {
                for (AdEvent e : events) held.add(new EventInSets(e, inDefault));
            }
            previous.clear();
        }
    }

    @Override
    public void processElement(StreamRecord<EventInSets> record) throws Exception {
        EventInSets in = record.getValue();
        AdEvent e = in.event;
        if (e.requestId == null) {
            if (e.eventType == EventType.CLICK) {
                for (String set : in.sets) emit(AttributionDelta.decided(e, false, sets.byName(set)), e.eventTs);
            }
            return;
        }
        if (e.eventType == EventType.IMPRESSION) {
            addImpression(e);
        } else if (AttributionRule.isAttributable(e)) {
            judge(in);
        }
    }

    private void judge(EventInSets in) throws Exception {
        AdEvent e = in.event;
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
            for (String set : in.sets) emit(AttributionDelta.decided(e, attributed, sets.byName(set)), e.eventTs);
        }
        if (!attributed) {
            // A copy: with object reuse the input instance may be reused, and the heap backend keeps references.
            held.add(new EventInSets(e.copy(), in.sets.clone()));
            timers.registerEventTimeTimer(VoidNamespace.INSTANCE, heldUntil(in));
        }
    }

    private void addImpression(AdEvent e) throws Exception {
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
        timers.registerEventTimeTimer(VoidNamespace.INSTANCE, impressionHeldUntil(e.eventTs));

        Iterable<EventInSets> waiting = held.get();
        if (waiting == null) return;
        long watermark = timers.currentWatermark();
        List<EventInSets> still = new ArrayList<>();
        boolean changed = false;
        for (EventInSets c : waiting) {
            if (rule.attributes(e.eventTs, c.event.eventTs)) {
                for (String name : c.sets) {
                    SetRules set = sets.byName(name);
                    // A set whose window of the click is closed has its final row: the change is the batch layer's.
                    if (set != null && !set.time().isClosed(set.time().windowStart(c.event.eventTs), watermark)) {
                        emit(AttributionDelta.attributedLater(c.event, set), e.eventTs);
                    }
                }
                attributedLater.inc();
                changed = true;
            } else {
                still.add(c);
            }
        }
        if (changed) held.update(still);
    }

    @Override
    public void onEventTime(InternalTimer<String, VoidNamespace> timer) throws Exception {
        long timestamp = timer.getTimestamp();
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
        Iterable<EventInSets> waiting = held.get();
        if (waiting != null) {
            List<EventInSets> still = new ArrayList<>();
            boolean dropped = false;
            for (EventInSets c : waiting) {
                if (heldUntil(c) > timestamp) still.add(c);
                else dropped = true;
            }
            if (still.isEmpty()) {
                held.clear();
            } else if (dropped) {
                held.update(still);
            }
        }
    }

    @Override
    public void onProcessingTime(InternalTimer<String, VoidNamespace> timer) {
        // no processing-time timers
    }

    private void emit(AttributionDelta delta, long timestamp) {
        output.collect(new StreamRecord<>(delta, timestamp));
    }

    /**
     * When a click or conversion can no longer be attributed in any of its sets: its window of each of them is
     * closed. {@code Long.MIN_VALUE} when this run computes none of them any more (it is then dropped at once).
     */
    long heldUntil(EventInSets c) {
        long until = Long.MIN_VALUE;
        for (String name : c.sets) {
            SetRules set = sets.byName(name);
            if (set != null)
                until = Math.max(until, set.time().closesAt(set.time().windowStart(c.event.eventTs)));
        }
        return until;
    }

    /** When no click an impression at {@code ts} could attribute can arrive any more, in any set with attribution. */
    long impressionHeldUntil(long ts) {
        long latestClick = saturatedAdd(ts, rule.windowMillis());
        long until = Long.MIN_VALUE;
        for (SetRules set : attributing) {
            until = Math.max(until, set.time().closesAt(set.time().windowStart(latestClick)));
        }
        return until;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
