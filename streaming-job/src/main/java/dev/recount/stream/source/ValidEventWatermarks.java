package dev.recount.stream.source;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
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
 */
public final class ValidEventWatermarks implements WatermarkGenerator<ParsedRecord> {
    private final long outOfOrdernessMillis;
    private final IdlenessTimer idlenessTimer;
    private final AtomicInteger idlePartitions;

    private long maxTimestamp;
    private boolean seenValidEvent;
    private boolean idle;
    /** Whether this partition is currently counted in {@code idlePartitions}. */
    private boolean countedIdle;

    /**
     * @param idlePartitions shared by the generators of one source subtask: how many partitions that had valid
     *                       events are idle now (a partition that never had any is not counted: it never went quiet)
     */
    public ValidEventWatermarks(Duration outOfOrderness, Duration idleness, RelativeClock activityClock,
                                AtomicInteger idlePartitions) {
        if (outOfOrderness.isNegative()) throw new IllegalArgumentException("outOfOrderness must not be negative: " + outOfOrderness);
        this.outOfOrdernessMillis = outOfOrderness.toMillis();
        this.idlenessTimer = new IdlenessTimer(activityClock, idleness);
        this.idlePartitions = idlePartitions;
        // So the first watermark cannot underflow.
        this.maxTimestamp = Long.MIN_VALUE + outOfOrdernessMillis + 1;
    }

    @Override
    public void onEvent(ParsedRecord record, long eventTimestamp, WatermarkOutput output) {
        if (!record.isValid()) return;
        maxTimestamp = Math.max(maxTimestamp, eventTimestamp);
        idlenessTimer.activity();
        seenValidEvent = true;
        idle = false;
        if (countedIdle) {
            countedIdle = false;
            idlePartitions.decrementAndGet();
        }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        if (idlenessTimer.checkIfIdle()) {
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
        output.emitWatermark(new Watermark(maxTimestamp - outOfOrdernessMillis - 1));
    }
}
