package dev.recount.stream.source;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.metrics.Gauge;

/**
 * The watermark strategy of the input source. Given to {@code env.fromSource}, so Flink runs one
 * {@link ValidEventWatermarks} per Kafka partition and the job's watermark is the minimum over the active ones.
 *
 * <p>Valid records carry their event_ts; invalid ones keep the Kafka record timestamp (they only go to the
 * dead-letter topic, where event time plays no role).
 */
public final class InputWatermarks implements WatermarkStrategy<ParsedRecord> {
    private static final long serialVersionUID = 2L;
    public static final String IDLE_PARTITIONS_METRIC = "idlePartitions";
    /** Valid events whose time was beyond wall clock + max-future when read (see ValidEventWatermarks). */
    public static final String EVENTS_AHEAD_METRIC = "eventsAheadOfClock";

    private final Duration outOfOrderness;
    private final Duration idleness;
    private final Duration maxFuture;
    private final Duration lateOnArrival;
    /** One per source subtask: Flink deserializes its own copy of this strategy for each subtask. */
    private transient AtomicInteger idlePartitions;

    private transient AtomicLong eventsAhead;

    /** @param lateOnArrival see {@link ValidEventWatermarks}: events further behind their record timestamp */
    public InputWatermarks(Duration outOfOrderness, Duration idleness, Duration maxFuture, Duration lateOnArrival) {
        this.outOfOrderness = Objects.requireNonNull(outOfOrderness, "outOfOrderness");
        this.idleness = Objects.requireNonNull(idleness, "idleness");
        this.maxFuture = Objects.requireNonNull(maxFuture, "maxFuture");
        this.lateOnArrival = Objects.requireNonNull(lateOnArrival, "lateOnArrival");
    }

    @Override
    public WatermarkGenerator<ParsedRecord> createWatermarkGenerator(WatermarkGeneratorSupplier.Context context) {
        if (idlePartitions == null) {
            idlePartitions = new AtomicInteger();
            eventsAhead = new AtomicLong();
            AtomicInteger idle = idlePartitions;
            AtomicLong ahead = eventsAhead;
            context.getMetricGroup().gauge(IDLE_PARTITIONS_METRIC, (Gauge<Integer>) idle::get);
            context.getMetricGroup().gauge(EVENTS_AHEAD_METRIC, (Gauge<Long>) ahead::get);
        }
        return new ValidEventWatermarks(
                outOfOrderness,
                idleness,
                maxFuture,
                lateOnArrival,
                context.getInputActivityClock(),
                System::currentTimeMillis,
                idlePartitions,
                eventsAhead);
    }

    @Override
    public TimestampAssigner<ParsedRecord> createTimestampAssigner(TimestampAssignerSupplier.Context context) {
        return (record, kafkaTimestamp) -> record.isValid() ? record.event.eventTs : kafkaTimestamp;
    }
}
