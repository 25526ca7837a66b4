package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.window.WindowAlignment;
import dev.recount.stream.JobTotals;
import java.time.Duration;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Lets each {@code event_id} through at most once (CONTRACT §2) and sends events that are too late for their
 * window (CONTRACT §3) to the {@link #TOO_LATE} side output instead of the window.
 *
 * <p>An id is remembered until the watermark passes {@code event_ts + dedup horizon} (for an event already too late
 * when it arrives: the watermark then + the horizon), rounded up to the next cleanup step (an eighth of the
 * horizon). The horizon is at least window + out-of-orderness + allowed lateness
 * (core's {@code EventTimeSettings} enforces that), so by the time an id is forgotten, any copy of it would be too
 * late for its window anyway: it goes to the backfill topic, where the batch layer de-duplicates, and is never
 * counted twice by the stream. The id is the whole key: copies are dropped whatever their {@code event_ts}.
 *
 * <p>How ids are kept, and why it is an operator rather than a {@code KeyedProcessFunction}: keyed by the id, every
 * event cost a state entry and its own cleanup timer, and the timer heap was a third of the job's busiest task
 * (docs/benchmarks.md §6). Here the stream is keyed by {@link #idBucket} (1024 buckets); a bucket has one map of
 * its ids, plus, per cleanup step, the list of ids due then — state in the step's <em>namespace</em>, which a
 * process function cannot use — and one timer per step. Forgetting a step's ids touches exactly those ids.
 *
 * <p>"Too late" is core's {@link WindowAlignment#isTooLate} with this operator's current watermark. The window
 * operator downstream never has a higher watermark than this operator had when it sent the event, so whatever
 * passes here is on time or within lateness there too. Too-late ids are remembered as well, so a duplicate of
 * a too-late event is dropped rather than sent to the backfill topic twice.
 *
 * <p>{@code closedUntil}: after a finished {@code --bounded} run every window it flushed is final; a later run
 * treats windows ending at or before {@code closedUntil} as too late, as if the watermark were there already.
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
public final class DedupAndRouteTooLate extends AbstractStreamOperator<AdEvent>
        implements OneInputStreamOperator<AdEvent, AdEvent>, Triggerable<Integer, Long> {
    private static final long serialVersionUID = 2L;

    public static final OutputTag<BackfillRecord> TOO_LATE =
            new OutputTag<>("too-late", TypeInformation.of(BackfillRecord.class));
    public static final String DUPLICATES_METRIC = "duplicatesDropped";
    public static final String TOO_LATE_METRIC = "tooLateEvents";

    /**
     * Number of id buckets: far more than Flink's key groups (128 by default), so every subtask gets a share at
     * any parallelism; few enough that cleanup timers stay a handful per step. Part of the state layout, like
     * {@link #idBucket}: changing either re-buckets the ids, so the operator would need a new uid.
     */
    public static final int ID_BUCKETS = 1024;
    /** log2 of {@link #ID_BUCKETS}: a bucket is the top this-many bits of the id's hash. */
    private static final int ID_BUCKET_BITS = Integer.numberOfTrailingZeros(ID_BUCKETS);
    static final int CLEANUP_STEPS_PER_HORIZON = 8;
    /** Operator (union) state: the watermark each subtask acted on when the snapshot was taken. */
    static final String WATERMARK_FLOOR_STATE = "watermark-floor";
    public static final String WATERMARK_FLOOR_METRIC = "restoredWatermarkFloor";

    private final WindowAlignment windows;
    private final long allowedLatenessMillis;
    private final long horizonMillis;
    private final long cleanupStepMillis;
    /** The watermark a finished --bounded run left behind (closedUntil); Long.MIN_VALUE when there is none. */
    private final long closedFloor;
    /** The watermark this operator acts as if it had at least: closedFloor, raised by a restored snapshot's. */
    private long floorWatermark;
    private transient ListState<Long> floorState;

    /** The bucket's ids (value unused). */
    private transient MapState<String, Boolean> seen;
    /** Per cleanup step (the namespace: the step's end, epoch ms): the bucket's ids to forget then. */
    private transient ListStateDescriptor<String> dueAt;
    private transient InternalTimerService<Long> cleanup;
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
        this.cleanupStepMillis = Math.max(1_000L, horizonMillis / CLEANUP_STEPS_PER_HORIZON);
        // isTooLate(ts) <=> windowEnd(ts) - 1 + lateness <= watermark, so a watermark of closedUntil - 1 + lateness
        // makes exactly the windows ending at or before closedUntil too late.
        this.closedFloor = closedUntil == Long.MIN_VALUE ? Long.MIN_VALUE : closedUntil - 1 + allowedLatenessMillis;
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
        floorState = context.getOperatorStateStore().getUnionListState(
                new ListStateDescriptor<>(WATERMARK_FLOOR_STATE, Types.LONG));
        floorWatermark = closedFloor;
        if (context.isRestored()) {
            for (Long restored : floorState.get()) floorWatermark = Math.max(floorWatermark, restored);
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        floorState.update(java.util.List.of(effectiveWatermark()));
    }

    /** The watermark lateness is judged against: the current one, never below the floor. */
    long effectiveWatermark() {
        return Math.max(cleanup.currentWatermark(), floorWatermark);
    }

    @Override
    public void open() throws Exception {
        super.open();
        getMetricGroup().gauge(WATERMARK_FLOOR_METRIC, (Gauge<Long>) () -> floorWatermark);
        seen = getPartitionedState(new MapStateDescriptor<>("seen-ids", Types.STRING, Types.BOOLEAN));
        dueAt = new ListStateDescriptor<>("ids-due", Types.STRING);
        cleanup = getInternalTimerService("dedup-cleanup", LongSerializer.INSTANCE, this);
        duplicates = getMetricGroup().counter(DUPLICATES_METRIC);
        tooLate = getMetricGroup().counter(TOO_LATE_METRIC);
        duplicatesTotal = JobTotals.counter(getRuntimeContext(), DUPLICATES_METRIC);
        tooLateTotal = JobTotals.counter(getRuntimeContext(), TOO_LATE_METRIC);
    }

    @Override
    public void processElement(StreamRecord<AdEvent> record) throws Exception {
        AdEvent event = record.getValue();
        if (seen.contains(event.eventId)) {
            duplicates.inc();
            duplicatesTotal.add(1L);
            return;
        }
        seen.put(event.eventId, Boolean.TRUE);
        long watermark = effectiveWatermark();
        // An id is remembered for a horizon from its event time, or from now (the watermark) if that is later: a
        // too-late event's event time is more than a horizon behind already, and its copy, typically seconds
        // behind it, must still find it (else both go to the backfill topic).
        long forgetAt = forgetAt(Math.max(event.eventTs, watermark));
        idsDueAt(forgetAt).add(event.eventId);
        cleanup.registerEventTimeTimer(forgetAt, forgetAt); // once per bucket and step: Flink de-duplicates timers

        if (windows.isTooLate(event.eventTs, allowedLatenessMillis, watermark)) {
            tooLate.inc();
            tooLateTotal.add(1L);
            output.collect(TOO_LATE, new StreamRecord<>(new BackfillRecord(event, windows.windowStart(event.eventTs),
                    windows.windowEnd(event.eventTs), watermark, event.topic, event.partition, event.offset),
                    record.getTimestamp()));
            return;
        }
        output.collect(record);
    }

    @Override
    public void onEventTime(InternalTimer<Integer, Long> timer) throws Exception {
        ListState<String> due = idsDueAt(timer.getNamespace());
        for (String id : due.get()) {
            seen.remove(id);
        }
        due.clear();
    }

    @Override
    public void onProcessingTime(InternalTimer<Integer, Long> timer) {
        // no processing-time timers
    }

    private ListState<String> idsDueAt(long forgetAt) throws Exception {
        return getPartitionedState(forgetAt, LongSerializer.INSTANCE, dueAt);
    }

    /** {@code eventTs + horizon}, rounded up to the cleanup step, so that a bucket has one timer per step. */
    long forgetAt(long eventTs) {
        long due = saturatedAdd(eventTs, horizonMillis);
        long rest = Math.floorMod(due, cleanupStepMillis);
        return rest == 0 ? due : saturatedAdd(due, cleanupStepMillis - rest);
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
