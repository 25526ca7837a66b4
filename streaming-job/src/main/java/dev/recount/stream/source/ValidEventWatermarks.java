package dev.recount.stream.source;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness.IdlenessTimer;
import org.apache.flink.util.clock.RelativeClock;

/**
 * The watermark of one Kafka partition (CONTRACT §3): the largest valid event time seen minus the out-of-orderness
 * (and the 1 ms Flink's convention subtracts: watermark {@code t} promises nothing at or before {@code t} is
 * still due). A partition without valid events for {@code idleness} of input activity time is marked idle, so it
 * stops holding back the watermark of the whole job.
 *
 * <p>Invalid records are ignored completely: they neither move event time nor count as activity. Flink's own
 * {@code withIdleness} would count them, so a partition that only receives garbage would hold every window
 * open; that is why this generator does idleness itself (with Flink's {@link IdlenessTimer}).
 *
 * <p>Besides the periodic emit, {@link #onEvent} emits the watermark as soon as event time has advanced by
 * {@link #EAGER_STEP_MILLIS}. A purely periodic watermark lags by one emit interval of processing time: when a
 * backlog or replay pushes minutes of event time through in one interval, events far beyond the allowed lateness
 * would be judged against a stale watermark and counted as on time. Emitting as event time advances keeps the
 * too-late decision about the data, not the speed of reading it, at one watermark per partition per
 * second of event time.
 *
 * <p>Watermarks ignore the future: an event moves its partition's watermark at most to the wall clock when it is
 * read. Validation judges event_ts against the producer-set record timestamp, so a device whose clock runs minutes
 * ahead sends valid events minutes ahead (up to {@code validation.max-future} past an honest record timestamp, and
 * any amount past one that runs ahead too). Any cap above the clock lets such events close the windows honest
 * events are still arriving for: with the cap at clock + max-future (5 minutes), one event 3.5 minutes ahead on each
 * partition put the watermark 3 minutes ahead, beyond every honest event's window and lateness, and sent them all to
 * the backfill topic. At the clock, the watermark is never ahead of what honest events arriving now already set.
 * Such an event still counts in its own window, which simply fires when real time gets there. Replays of old data
 * are unaffected (their event times lie behind the clock). The cost is on a host whose clock runs behind the
 * producers': windows fire that much later.
 *
 * <p>Events late on arrival are ignored too: one whose time lies more than {@code lateOnArrival} (window +
 * out-of-orderness + allowed lateness, at least an hour: {@code EventTimeSettings.lateOnArrival}) before its own
 * record timestamp was too late already when it was sent, and neither moves event time nor keeps its partition
 * active. Validation accepts events up to {@code validation.max-past} (a week) behind their record timestamp; a
 * partition that received nothing else (a producer can pick the partition) used to stay active with a watermark a
 * week behind, holding every window of the job open, and its state growing, for as long as such events kept coming.
 * Now an hour at most: with events further behind it goes idle like a quiet one, and its events are judged against
 * the others' watermark (too late: to the backfill topic). A replay of old data keeps its original record
 * timestamps, so its events are not late on arrival; a record timestamp set by a hostile producer is still believed
 * (a topic with {@code message.timestamp.type=LogAppendTime} rules that out).
 */
public final class ValidEventWatermarks implements WatermarkGenerator<ParsedRecord> {
    private final long outOfOrdernessMillis;
    private final long maxFutureMillis;
    private final long lateOnArrivalMillis;
    private final IdlenessTimer idlenessTimer;
    private final AtomicInteger idlePartitions;
    private final LongSupplier wallClock;
    private final AtomicLong eventsAhead;

    /** Event time the watermark must gain before {@link #onEvent} emits it instead of waiting for the period. */
    static final long EAGER_STEP_MILLIS = 1_000;

    /** The largest event time seen (late-on-arrival events aside), possibly ahead of the clock. */
    private long maxEventTime;
    /** The part of it the watermark follows: never ahead of the clock when it was last looked at. */
    private long maxTimestamp;

    private long lastEmitted = Long.MIN_VALUE;
    private boolean seenValidEvent;
    private boolean idle;
    /** Whether this partition is currently counted in {@code idlePartitions}. */
    private boolean countedIdle;

    /**
     * @param idlePartitions shared by the generators of one source subtask: how many partitions that had valid
     *                       events are idle now (a partition that never had any is not counted: it never went quiet)
     * @param wallClock      epoch milliseconds now (the watermark never passes it)
     * @param eventsAhead    counts events timed more than {@code maxFuture} ahead of it: a producer whose clock runs
     *                       ahead (shared per source subtask, a metric)
     */
    public ValidEventWatermarks(
            Duration outOfOrderness,
            Duration idleness,
            Duration maxFuture,
            Duration lateOnArrival,
            RelativeClock activityClock,
            LongSupplier wallClock,
            AtomicInteger idlePartitions,
            AtomicLong eventsAhead) {
        if (outOfOrderness.isNegative())
            throw new IllegalArgumentException("outOfOrderness must not be negative: " + outOfOrderness);
        if (maxFuture.isNegative()) throw new IllegalArgumentException("maxFuture must not be negative: " + maxFuture);
        this.outOfOrdernessMillis = outOfOrderness.toMillis();
        this.maxFutureMillis = maxFuture.toMillis();
        if (lateOnArrival.isNegative())
            throw new IllegalArgumentException("lateOnArrival must not be negative: " + lateOnArrival);
        this.lateOnArrivalMillis = lateOnArrival.toMillis();
        this.idlenessTimer = new IdlenessTimer(activityClock, idleness);
        this.idlePartitions = idlePartitions;
        this.wallClock = wallClock;
        this.eventsAhead = eventsAhead;
        // So the first watermark cannot underflow.
        this.maxTimestamp = Long.MIN_VALUE + outOfOrdernessMillis + 1;
        this.maxEventTime = maxTimestamp;
    }

    @Override
    public void onEvent(ParsedRecord record, long eventTimestamp, WatermarkOutput output) {
        if (!record.isValid()) return;
        seenValidEvent = true;
        // No overflow: validation keeps the record timestamp within max-past and max-future of the event time.
        if (record.event.recordTs - eventTimestamp > lateOnArrivalMillis) return;
        long now = wallClock.getAsLong();
        if (eventTimestamp > saturatedAdd(now, maxFutureMillis)) eventsAhead.incrementAndGet();
        maxEventTime = Math.max(maxEventTime, eventTimestamp);
        release(now);
        idlenessTimer.activity();
        idle = false;
        if (countedIdle) {
            countedIdle = false;
            idlePartitions.decrementAndGet();
        }
        long watermark = maxTimestamp - outOfOrdernessMillis - 1;
        if (lastEmitted == Long.MIN_VALUE || watermark - lastEmitted >= EAGER_STEP_MILLIS) {
            emit(output, watermark);
        }
    }

    /** Event time up to the clock counts; what lies beyond it is released as real time gets there. */
    private void release(long now) {
        maxTimestamp = Math.max(maxTimestamp, Math.min(maxEventTime, now));
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    private void emit(WatermarkOutput output, long watermark) {
        output.emitWatermark(new Watermark(watermark));
        lastEmitted = watermark;
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        release(wallClock.getAsLong());
        // A partition holding event time ahead of the clock is not idle until the clock has passed it: its windows
        // close as real time gets there, even if nothing else arrives.
        if (maxEventTime <= maxTimestamp && idlenessTimer.checkIfIdle()) {
            if (!idle) {
                idle = true;
                output.markIdle();
                if (seenValidEvent) {
                    countedIdle = true;
                    idlePartitions.incrementAndGet();
                }
            }
            return;
        }
        emit(output, maxTimestamp - outOfOrdernessMillis - 1);
    }
}
