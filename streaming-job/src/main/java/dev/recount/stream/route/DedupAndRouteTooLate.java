package dev.recount.stream.route;

import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.EventTime;
import dev.recount.stream.attribution.EventInSets;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.types.BackfillRecordSerializer;
import dev.recount.stream.types.EventTypes;
import dev.recount.stream.window.SetPartial;
import dev.recount.stream.window.SetPartials;
import dev.recount.stream.window.WindowPartial;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets each {@code event_id} through at most once (CONTRACT §2) and, for every metric set the job computes, counts it
 * in that set's window or — when it is too late for the set's window (CONTRACT §3) — names the set on the event's
 * one record on the {@link #TOO_LATE} side output. An event may be too late for one set and on time for another (their
 * windows differ): every valid unique event is counted exactly once per set, in the set's rows or on the backfill
 * topic for it.
 *
 * <p>An id is remembered until the watermark passes the latest of its event time, its record timestamp and the
 * watermark it was read at ({@link #rememberedFrom}) plus the dedup horizon, rounded up to the next cleanup step (an
 * eighth of the horizon). The horizon is at least window + out-of-orderness + allowed lateness
 * (core's {@code EventTimeSettings} enforces that), so by the time an id is forgotten, any copy of it would be too
 * late for its window anyway: it goes to the backfill topic, where the batch layer de-duplicates, and is never
 * counted twice by the stream. The job's horizon covers the longest window of any set. The id is the whole key: copies
 * are dropped whatever their {@code event_ts}.
 *
 * <p>How ids are kept, and why it is an operator rather than a {@code KeyedProcessFunction}: keyed by the id, every
 * event cost a state entry and its own cleanup timer, and the timer heap was a third of the job's busiest task
 * (docs/benchmarks.md §6). Here the stream is keyed by {@link #idBucket} (1024 buckets); a bucket keeps one
 * {@link SeenIds} table of 128-bit {@link IdDigest}s with the time each may be forgotten (bytes, not objects:
 * ~50 bytes per id in memory, 24 in a checkpoint). Forgetting needs no timers: when the watermark reaches the
 * earliest time any bucket has ids due at, one sweep over this subtask's buckets forgets everything due — once
 * per cleanup step, as the timers did, but without a timer per bucket and step (a timer heap insert and poll per
 * bucket was 15 % of the de-dup thread while a backlog was replayed, when steps pass every few milliseconds).
 *
 * <p>What goes on is not the events but partial sums per (set, window, dimension values) ({@link SetPartials}): an
 * on-time event is added to its window key's sum in each set, and the sums of a window leave right before the
 * watermark that fires it is forwarded, so the window operator still fires each window once with every on-time event
 * in it. An event for a window that has fired already (within allowed lateness) leaves at once as a partial of its
 * own, so it re-fires its window with revision + 1 as before. The buffered sums are operator state.
 *
 * <p>"Too late" is core's {@link EventTime#isClosed} of the set's window with this operator's current watermark. The
 * window operator downstream never has a higher watermark than this operator had when it sent the event (this operator is
 * never idle downstream, so it always holds that watermark back: {@link #processWatermarkStatus}), so whatever
 * passes here is on time or within lateness there too. Too-late ids are remembered as well — for a horizon from
 * the watermark they arrived at, since their own event time lies behind it — so a duplicate of a too-late event is
 * dropped rather than sent to the backfill topic twice.
 *
 * <p>{@code closedUntil}: after a finished {@code --bounded} run every window it flushed is final; a later run
 * treats windows ending at or before {@code closedUntil} as too late, as if the watermark were there already
 * ({@link EventTime#watermarkClosing}, the same watermark for every window size).
 *
 * <p><b>Sets added and removed between runs.</b> Each set counts from a window start of its own, kept in the
 * checkpoint ({@link #SET_STARTS_STATE}): {@code Long.MIN_VALUE} for the sets of a fresh start. A set that a restored
 * checkpoint does not know (added to the definitions since) starts at its first window boundary after everything the
 * operator had read before the checkpoint — after the restored watermark floor and after the latest event time it had
 * seen ({@link #MAX_EVENT_TIME_STATE}) — so its first window holds only events read after the restore, all of them.
 * Events of its earlier windows are neither counted nor sent to the backfill topic for it: {@code backfill range
 * --set} computes those windows from the lake. Restored sums of a set the run no longer computes are dropped. A
 * checkpoint of the release before metric sets knows neither state: its one set, the default set, counts on as
 * before, its buffered sums ({@link WindowPartial}) become the default set's, and any other set starts after the
 * restored floor (that release did not keep the latest event time).
 *
 * <p>Why the watermark is part of this operator's checkpointed state: Flink does not checkpoint watermarks, so a
 * job restored from a checkpoint starts with none and the window operator has already purged the windows that
 * were closed before the checkpoint. Judged against "no watermark", the replayed events of such a window would
 * be on time again, re-open it with empty state and fire it as revision 1 with only themselves — a partial row,
 * and events that reach neither the full row nor the backfill topic. So every snapshot records the watermark
 * this operator acted on ({@link #WATERMARK_FLOOR_STATE}), and a restored operator never judges lateness below
 * it: a window closed before the checkpoint stays closed after the restore. All subtasks see the same watermark
 * at a checkpoint barrier (every input channel delivers every source's watermarks before it); the largest
 * restored value is taken, because routing to the backfill topic is always safe for the accounting, re-opening
 * a purged window never is.
 */
public final class DedupAndRouteTooLate extends AbstractStreamOperator<SetPartial>
        implements OneInputStreamOperator<AdEvent, SetPartial>, Triggerable<Integer, Long> {
    private static final long serialVersionUID = 4L;

    public static final OutputTag<BackfillRecord> TOO_LATE = new OutputTag<>("too-late", BackfillRecordSerializer.TYPE);
    /**
     * Every valid event this operator receives, before de-duplication, as it came: the lake's input. The lake sink
     * is chained to this operator, so an event is serialized once on the source thread (for the de-dup) instead of
     * twice, and read back once.
     */
    public static final OutputTag<AdEvent> ALL_EVENTS = new OutputTag<>("all-events", EventTypes.AD_EVENT);
    /**
     * With attribution on for some set: every unique event that attribution looks at (clicks, conversions,
     * impressions with a request id) with the sets with attribution on that count it (on time, started); none when no
     * such set counts it. No state of its own: turning it on or off changes neither this operator's state nor its uid.
     */
    public static final OutputTag<EventInSets> ATTRIBUTION_EVENTS =
            new OutputTag<>("attribution-events", EventInSets.TYPE);

    public static final String DUPLICATES_METRIC = JobTotals.DUPLICATES_DROPPED;
    public static final String TOO_LATE_METRIC = JobTotals.TOO_LATE_EVENTS;

    /**
     * Number of id buckets: far more than Flink's key groups (128 by default), so every subtask gets a share at
     * any parallelism; few enough that a sweep over a subtask's buckets stays cheap. Part of the state layout, like
     * {@link #idBucket}: changing either re-buckets the ids, so the operator would need a new uid.
     */
    public static final int ID_BUCKETS = 1024;
    /** log2 of {@link #ID_BUCKETS}: a bucket is the top this-many bits of the id's hash. */
    private static final int ID_BUCKET_BITS = Integer.numberOfTrailingZeros(ID_BUCKETS);

    static final int CLEANUP_STEPS_PER_HORIZON = 8;
    /** How many horizons past its event time an id's record timestamp may extend its memory ({@link #rememberedFrom}). */
    static final long RECORD_TIME_SLACK_HORIZONS = 8;
    /** Operator (union) state: the watermark each subtask acted on when the snapshot was taken. */
    static final String WATERMARK_FLOOR_STATE = "watermark-floor";
    /** Operator state: the partial sums buffered when the snapshot was taken, of every set. */
    static final String PARTIALS_STATE = "set-partials";
    /** Operator state of the release before metric sets: its buffered sums, converted to the default set's. */
    static final String PREVIOUS_RELEASE_PARTIALS_STATE = "window-partials";
    /** Operator (union) state: per set, the first window start it counts ({@link #setStart}). */
    static final String SET_STARTS_STATE = "set-starts";
    /** Operator (union) state: the latest event time each subtask had seen when the snapshot was taken. */
    static final String MAX_EVENT_TIME_STATE = "max-event-time";
    /**
     * Most (set, window, dimension values) sums buffered per subtask before they all leave early: bounds the memory at a
     * few MB whatever the number of keys; with few keys they leave only when their window fires.
     */
    static final int MAX_BUFFERED_SUMS = 20_000;

    public static final String WATERMARK_FLOOR_METRIC = "restoredWatermarkFloor";
    /**
     * Ids this subtask remembers now. What it grows with besides the rate: in a catch-up of partitions with unequal
     * backlogs, the ids of the partitions that run ahead in event time stay until the slowest one's watermark passes
     * them (about 50 bytes of heap each).
     */
    public static final String REMEMBERED_IDS_METRIC = "rememberedIds";

    private static final Logger LOG = LoggerFactory.getLogger(DedupAndRouteTooLate.class);

    private final JobSets sets;
    private final long horizonMillis;
    private final long cleanupStepMillis;
    /** The watermark a finished --bounded run left behind (closedUntil); Long.MIN_VALUE when there is none. */
    private final long closedFloor;
    /** Per set position: whether its counted events go to {@link #ATTRIBUTION_EVENTS} as well. */
    private final boolean[] attributing;
    /** The watermark this operator acts as if it had at least: closedFloor, raised by a restored snapshot's. */
    private long floorWatermark;

    private transient ListState<Long> floorState;
    /** Per set position: the first window start it counts (see the class comment). */
    private transient long[] setStarts;

    private transient ListState<Tuple2<String, Long>> setStartsState;
    /** The latest event time of any unique event this subtask read (and, after a restore, of any subtask before). */
    private transient long maxEventTime;

    private transient ListState<Long> maxEventTimeState;

    /** The bucket's remembered ids. */
    private transient ValueState<SeenIds> seen;

    /**
     * On the heap state backend: each bucket's table as {@link #seen} last returned it, by bucket, so that an event
     * costs no lookup in the backend's state map (two per event, value and update, were ~10 % of this thread: each
     * a few cache misses in a map of scattered entries, beside tables of millions of ids). The tables are changed in
     * place, which the heap backend allows: its {@code value()} hands out the object it holds, copied first while a
     * snapshot still reads it. That copy-on-write is why the cache is emptied at every snapshot
     * ({@link #snapshotState}): the next event of each bucket then asks the backend again and gets the copy, never
     * the object the snapshot is writing. {@code null} on any other backend, where {@code value()} returns a copy and
     * only {@code update()} stores a change.
     */
    private transient SeenIds[] tables;

    static final String SEEN_IDS_STATE = "seen-id-digests";
    /**
     * The earliest forgetAt of any remembered id of this subtask: the watermark that reaches it sweeps the buckets
     * ({@link #forgetDueIds}). Not checkpointed: {@code Long.MIN_VALUE} (unknown) after a restore, so the first
     * watermark sweeps and learns it again.
     */
    private transient long nextDue;
    /**
     * How many ids this subtask's buckets hold: counted up per new id, and recounted by every sweep; 0 after a
     * restore until the first watermark sweeps (which {@link #nextDue} being unknown makes it do).
     */
    private transient long rememberedIds;

    private transient IdDigest digest;
    private transient InternalTimerService<Long> cleanup;
    private transient SetPartials partials;
    private transient ListState<SetPartial> partialsState;
    private transient Counter duplicates;
    private transient Counter tooLate;
    /** Per set position: events too late for that set (metric group {@code metric_set=<name>}). */
    private transient Counter[] setTooLate;

    private transient LongCounter duplicatesTotal;
    private transient LongCounter tooLateTotal;

    /**
     * @param sets         the sets the job computes, each with its window size and the allowed lateness
     * @param dedupHorizon how long an id is remembered; at least the longest window + out-of-orderness + lateness
     * @param closedUntil  windows ending at or before this (epoch ms) are final; {@code Long.MIN_VALUE} for none
     * @param attribution  whether to send events of the sets with attribution on to {@link #ATTRIBUTION_EVENTS}
     */
    public DedupAndRouteTooLate(JobSets sets, Duration dedupHorizon, long closedUntil, boolean attribution) {
        this.sets = sets;
        this.attributing = new boolean[sets.size()];
        for (int i = 0; i < sets.size(); i++)
            attributing[i] = attribution && sets.get(i).set().attribution();
        this.horizonMillis = dedupHorizon.toMillis();
        long longest = sets.longestWindow().toMillis();
        if (horizonMillis < longest) {
            throw new IllegalArgumentException(
                    "the dedup horizon " + dedupHorizon + " is shorter than the longest window " + sets.longestWindow()
                            + ": a copy could be counted twice");
        }
        this.cleanupStepMillis = Math.max(1_000L, horizonMillis / CLEANUP_STEPS_PER_HORIZON);
        // The same for every window size: exactly the windows ending at or before closedUntil are closed by it.
        this.closedFloor = sets.get(0).time().watermarkClosing(closedUntil);
        this.floorWatermark = closedFloor;
    }

    /**
     * The key this operator must be keyed by. {@link String#hashCode} is fixed by the Java specification, so an id
     * lands in the same bucket after a restore on any JVM. The top bits of a Fibonacci hash, not {@code hash mod
     * 1024}: the ids of one bucket then still differ in the low bits that the bucket's hash map indexes by.
     */
    public static Integer idBucket(AdEvent event) {
        return (event.eventId.hashCode() * 0x9E3779B9) >>> (Integer.SIZE - ID_BUCKET_BITS);
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        floorState = context.getOperatorStateStore()
                .getUnionListState(new ListStateDescriptor<>(WATERMARK_FLOOR_STATE, Types.LONG));
        floorWatermark = closedFloor;
        partialsState = context.getOperatorStateStore()
                .getListState(new ListStateDescriptor<>(PARTIALS_STATE, SetPartial.TYPE));
        ListState<WindowPartial> previousReleasePartials = context.getOperatorStateStore()
                .getListState(new ListStateDescriptor<>(
                        PREVIOUS_RELEASE_PARTIALS_STATE, WindowPartial.RestoredOnly.INSTANCE));
        setStartsState = context.getOperatorStateStore()
                .getUnionListState(new ListStateDescriptor<>(SET_STARTS_STATE, Types.TUPLE(Types.STRING, Types.LONG)));
        maxEventTimeState = context.getOperatorStateStore()
                .getUnionListState(new ListStateDescriptor<>(MAX_EVENT_TIME_STATE, Types.LONG));
        partials = new SetPartials(sets, MAX_BUFFERED_SUMS);
        setStarts = new long[sets.size()];
        Arrays.fill(setStarts, Long.MIN_VALUE);
        maxEventTime = Long.MIN_VALUE;
        if (!context.isRestored()) return;

        for (Long restored : floorState.get()) floorWatermark = Math.max(floorWatermark, restored);
        for (Long restored : maxEventTimeState.get()) maxEventTime = Math.max(maxEventTime, restored);
        Map<String, Long> restoredStarts = new HashMap<>();
        for (Tuple2<String, Long> s : setStartsState.get()) restoredStarts.merge(s.f0, s.f1, Math::max);
        // Every snapshot of this release names its sets; one that names none is of the release before metric sets,
        // whose one set was the default set.
        boolean previousRelease = restoredStarts.isEmpty();
        long readUpTo = Math.max(floorWatermark, maxEventTime);
        for (int i = 0; i < sets.size(); i++) {
            SetRules rules = sets.get(i);
            Long start = restoredStarts.get(rules.name());
            if (start != null) {
                setStarts[i] = start;
            } else if (previousRelease && rules.set().isDefault()) {
                setStarts[i] = Long.MIN_VALUE;
            } else {
                setStarts[i] = firstWindowAfter(rules.time(), readUpTo);
                if (getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0) {
                    LOG.info(
                            "metric set {} is new in this run: it counts from its window starting at {} (epoch ms);"
                                    + " `backfill range --set {}` computes the windows before",
                            rules.name(),
                            setStarts[i],
                            rules.name());
                }
            }
        }
        // Restored sums are of windows that had not fired at the checkpoint; they leave before the watermark that
        // fires them, like any other. (Rescaled, a subtask may get another's: sums can go from anywhere.)
        long dropped = 0;
        for (SetPartial p : partialsState.get()) {
            if (!partials.restore(p)) dropped++;
        }
        SetRules defaultSet = sets.defaultSet();
        for (WindowPartial p : previousReleasePartials.get()) {
            if (defaultSet == null || !partials.restore(p.toDefaultSet(defaultSet.set()))) dropped++;
        }
        previousReleasePartials.clear();
        if (dropped > 0) LOG.info("dropped {} buffered sums of metric sets no longer defined", dropped);
    }

    /** The first window start of {@code time}'s windows after {@code instant}; every window if there is none yet. */
    static long firstWindowAfter(EventTime time, long instant) {
        if (instant == Long.MIN_VALUE) return Long.MIN_VALUE;
        long start = time.windowStart(instant);
        return start > Long.MAX_VALUE - time.sizeMillis() ? Long.MAX_VALUE : start + time.sizeMillis();
    }

    /** The first window start the set at {@code position} counts in this run. */
    long setStart(int position) {
        return setStarts[position];
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (tables != null) Arrays.fill(tables, null); // see tables: what the snapshot holds is not ours to change
        floorState.update(List.of(effectiveWatermark()));
        partialsState.update(partials.snapshot());
        List<Tuple2<String, Long>> starts = new ArrayList<>(sets.size());
        for (int i = 0; i < sets.size(); i++) starts.add(Tuple2.of(sets.get(i).name(), setStarts[i]));
        setStartsState.update(starts);
        maxEventTimeState.update(List.of(maxEventTime));
    }

    /** The watermark lateness is judged against: the current one, never below the floor. */
    long effectiveWatermark() {
        return Math.max(cleanup.currentWatermark(), floorWatermark);
    }

    @Override
    public void open() throws Exception {
        super.open();
        getMetricGroup().gauge(WATERMARK_FLOOR_METRIC, (Gauge<Long>) () -> floorWatermark);
        getMetricGroup().gauge(REMEMBERED_IDS_METRIC, (Gauge<Long>) () -> rememberedIds);
        seen = getPartitionedState(new ValueStateDescriptor<>(SEEN_IDS_STATE, SeenIds.Serializer.INSTANCE));
        tables = getKeyedStateBackend() instanceof HeapKeyedStateBackend ? new SeenIds[ID_BUCKETS] : null;
        digest = new IdDigest();
        nextDue = Long.MIN_VALUE;
        // No timers are registered any more; the service stays so that cleanup timers restored from a checkpoint of
        // an earlier version still fire (and forget, as they did) instead of finding no one to call.
        cleanup = getInternalTimerService("dedup-cleanup", LongSerializer.INSTANCE, this);
        duplicates = getMetricGroup().counter(DUPLICATES_METRIC);
        tooLate = getMetricGroup().counter(TOO_LATE_METRIC);
        setTooLate = new Counter[sets.size()];
        for (int i = 0; i < sets.size(); i++) {
            setTooLate[i] =
                    JobTotals.setGroup(getMetricGroup(), sets.get(i).name()).counter(TOO_LATE_METRIC);
        }
        duplicatesTotal = JobTotals.counter(getRuntimeContext(), DUPLICATES_METRIC);
        tooLateTotal = JobTotals.counter(getRuntimeContext(), TOO_LATE_METRIC);
    }

    @Override
    public void processElement(StreamRecord<AdEvent> record) throws Exception {
        AdEvent event = record.getValue();
        output.collect(ALL_EVENTS, record);
        long watermark = effectiveWatermark();
        long forgetAt = forgetAt(rememberedFrom(event, watermark));
        int bucket = (Integer) getCurrentKey();
        SeenIds ids = table(bucket);
        boolean created = ids == null;
        if (created) ids = new SeenIds();
        int added = ids.add(digest.of(event.eventId), forgetAt);
        if (added == SeenIds.COPY) {
            duplicates.inc();
            duplicatesTotal.add(1L);
            return;
        }
        if (created || tables == null) stored(bucket, ids); // otherwise changed in place, where the backend holds it
        rememberedIds++;
        if (forgetAt < nextDue) nextDue = forgetAt;

        if (event.eventTs > maxEventTime) maxEventTime = event.eventTs;

        List<SetWindow> tooLateFor = null;
        String[] attributionSets = null;
        int attributionCount = 0;
        boolean full = false;
        for (int i = 0; i < setStarts.length; i++) {
            SetRules rules = sets.get(i);
            EventTime time = rules.time();
            long windowStart = time.windowStart(event.eventTs);
            if (windowStart < setStarts[i]) continue; // before the set's first window in this deployment
            if (time.isClosed(windowStart, watermark)) {
                if (tooLateFor == null) tooLateFor = new ArrayList<>(2);
                tooLateFor.add(new SetWindow(rules.name(), windowStart, rules.windowEnd(windowStart)));
                setTooLate[i].inc();
                continue;
            }
            if (attributing[i]) {
                if (attributionSets == null) attributionSets = new String[setStarts.length];
                attributionSets[attributionCount++] = rules.name();
            }
            if (time.hasFired(windowStart, watermark)) {
                // Its window has fired: on at once, so that this event re-fires it (revision + 1).
                MetricSet set = rules.set();
                output.collect(new StreamRecord<>(
                        new SetPartial(
                                rules.name(),
                                windowStart,
                                set.dimensionValues(event),
                                set.add(set.newSums(), event),
                                event),
                        event.eventTs));
            } else {
                full |= partials.add(i, windowStart, event);
            }
        }
        if (full) partials.takeAll(this::emit);
        if (tooLateFor != null) {
            tooLate.inc();
            tooLateTotal.add(1L);
            output.collect(
                    TOO_LATE,
                    new StreamRecord<>(
                            new BackfillRecord(
                                    event, tooLateFor, watermark, event.topic, event.partition, event.offset),
                            record.getTimestamp()));
        }
        if (attributionCount > 0
                && (AttributionRule.isAttributable(event) || AttributionRule.isCandidateImpression(event))) {
            output.collect(
                    ATTRIBUTION_EVENTS,
                    new StreamRecord<>(
                            new EventInSets(event, Arrays.copyOf(attributionSets, attributionCount)), event.eventTs));
        }
    }

    /**
     * The sums of every window this watermark fires leave first, then the ids it makes due are forgotten, then the
     * watermark goes on: downstream, each window fires only after all its partials have arrived.
     */
    @Override
    public void processWatermark(Watermark mark) throws Exception {
        partials.takeFiredBy(mark.getTimestamp(), this::emit);
        forgetDueIds(mark.getTimestamp());
        super.processWatermark(mark);
    }

    /**
     * Once the watermark reaches {@link #nextDue}: every bucket of this subtask forgets the ids due at or before
     * {@code watermark}, and empty buckets leave the state. Ids are forgotten exactly when the watermark passes their
     * forgetAt, before any later event is looked up, as a timer per bucket would have done.
     */
    private void forgetDueIds(long watermark) throws Exception {
        if (watermark < nextDue) return;
        List<Integer> buckets;
        try (Stream<Integer> keys =
                this.<Integer>getKeyedStateBackend().getKeys(SEEN_IDS_STATE, VoidNamespace.INSTANCE)) {
            buckets = keys.collect(Collectors.toList()); // collected first: clearing a bucket changes the key set
        }
        long next = Long.MAX_VALUE;
        long remembered = 0;
        for (Integer bucket : buckets) {
            setCurrentKey(bucket);
            SeenIds ids = table(bucket);
            if (ids == null) continue;
            if (ids.forgetUpTo(watermark) > 0) {
                if (ids.isEmpty()) {
                    cleared(bucket);
                    continue;
                }
                if (tables == null) stored(bucket, ids);
            }
            next = Math.min(next, ids.firstDueTime());
            remembered += ids.size();
        }
        nextDue = next;
        rememberedIds = remembered;
    }

    /**
     * The idle status stops here: downstream, this operator is always active. Were it idle there, the window operator
     * would leave it out of its watermark and follow the other subtasks of this operator alone. Those read the same
     * inputs but not in step: when the partitions come back (a broker restart, a quiet night), one of them can
     * forward a watermark minutes ahead while this one is still marked idle and is judging the first records back
     * against its older watermark. What it then finds on time, the window operator has already fired and purged:
     * the sums arrived too late there and were counted nowhere, neither in a row nor on the backfill topic (the
     * fault suite's broker restart, 10 events of 4,139). Held in the window operator's watermark, this operator is
     * never behind it, so what it lets through is never too late there. Nothing is lost by it: every subtask of this
     * operator reads every input, so it is idle only when all inputs are, and then no watermark moves anyway.
     *
     * <p>The buffered sums still leave when the inputs go quiet (leaving early is always allowed), so the windows
     * they belong to show them without waiting for traffic to return.
     */
    @Override
    public void processWatermarkStatus(WatermarkStatus status) {
        if (status.isIdle()) partials.takeAll(this::emit);
    }

    @Override
    public void finish() throws Exception {
        partials.takeAll(this::emit); // the end-of-input watermark took them all already; never leave any behind
        super.finish();
    }

    private void emit(SetPartial p) {
        // Timestamped with the window's last millisecond, the time of its firing.
        output.collect(new StreamRecord<>(p, sets.byName(p.set).time().lastMillis(p.windowStart)));
    }

    /** Only cleanup timers restored from an earlier version's checkpoint: they forget what they were set for. */
    @Override
    public void onEventTime(InternalTimer<Integer, Long> timer) throws Exception {
        int bucket = timer.getKey();
        SeenIds ids = table(bucket);
        if (ids == null) return;
        rememberedIds -= ids.forgetUpTo(timer.getNamespace());
        if (ids.isEmpty()) {
            cleared(bucket);
        } else if (tables == null) {
            stored(bucket, ids);
        }
    }

    /** The current key's table ({@code bucket} is the current key), from {@link #tables} when it holds it. */
    private SeenIds table(int bucket) throws Exception {
        if (tables == null) return seen.value();
        SeenIds ids = tables[bucket];
        if (ids == null) {
            ids = seen.value();
            tables[bucket] = ids;
        }
        return ids;
    }

    private void stored(int bucket, SeenIds ids) throws Exception {
        seen.update(ids);
        if (tables != null) tables[bucket] = ids;
    }

    private void cleared(int bucket) {
        seen.clear();
        if (tables != null) tables[bucket] = null;
    }

    @Override
    public void onProcessingTime(InternalTimer<Integer, Long> timer) {
        // no processing-time timers
    }

    /**
     * The time a horizon of watermark progress is counted from before an id may be forgotten: the latest of its event
     * time, its Kafka record timestamp and the watermark it was read at.
     * <ul>
     *   <li>Event time alone would do if the watermark moved evenly with the data. It does not: while one partition
     *       lags (a consumer catching up, a stalled producer's burst), the watermark waits for it, an event with a
     *       long delay is still on time and counted; then the lagging partition catches up and the watermark jumps
     *       minutes in a moment. A copy the producer sent seconds after the first would find the id forgotten, be
     *       too late, and go to the backfill topic although the row counts its first copy (found by the fault
     *       suite under load).</li>
     *   <li>The record timestamp is when the producer sent the first copy, and a copy is sent after it. Event
     *       times normally lie at or before their send time, so the watermark does not pass the copy's send time
     *       unless data from a clock running ahead (up to {@code validation.max-future}) or from partitions far
     *       ahead of the copy's own is read first. So a copy sent within the horizon of the first is dropped however
     *       unevenly the watermark moves. It costs nothing extra when data arrives live (send time is about event
     *       time plus delay). Old data replayed with new timestamps (produce's default) would keep every id until
     *       the replay ends, so the record timestamp counts for at most {@link #RECORD_TIME_SLACK_HORIZONS} horizons
     *       past the event time: memory stays bounded by event time, and a lagging watermark may still jump that
     *       far without a copy slipping through.</li>
     *   <li>The watermark: an event far behind it (too late) is remembered from the watermark on, so that a copy
     *       read a moment later is not sent to the backfill topic a second time.</li>
     * </ul>
     * None of the three lets an id be remembered for longer than a valid event time would: validation bounds the
     * record timestamp to the event time's valid range.
     */
    long rememberedFrom(AdEvent event, long watermark) {
        long sent = Math.min(event.recordTs, saturatedAdd(event.eventTs, RECORD_TIME_SLACK_HORIZONS * horizonMillis));
        return Math.max(Math.max(event.eventTs, sent), watermark);
    }

    /**
     * {@code from + horizon}, rounded up to the cleanup step, so that the buckets are swept once per step and a
     * table's due index has one list per step.
     */
    long forgetAt(long from) {
        long due = saturatedAdd(from, horizonMillis);
        long rest = Math.floorMod(due, cleanupStepMillis);
        return rest == 0 ? due : saturatedAdd(due, cleanupStepMillis - rest);
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
