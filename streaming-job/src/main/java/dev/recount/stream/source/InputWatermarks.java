package dev.recount.stream.source;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
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
    private static final long serialVersionUID = 1L;
    public static final String IDLE_PARTITIONS_METRIC = "idlePartitions";

    private final Duration outOfOrderness;
    private final Duration idleness;
    /** One per source subtask: Flink deserializes its own copy of this strategy for each subtask. */
    private transient AtomicInteger idlePartitions;

    public InputWatermarks(Duration outOfOrderness, Duration idleness) {
        this.outOfOrderness = Objects.requireNonNull(outOfOrderness, "outOfOrderness");
        this.idleness = Objects.requireNonNull(idleness, "idleness");
    }

    @Override
    public WatermarkGenerator<ParsedRecord> createWatermarkGenerator(WatermarkGeneratorSupplier.Context context) {
        if (idlePartitions == null) {
            idlePartitions = new AtomicInteger();
            AtomicInteger counter = idlePartitions;
            context.getMetricGroup().gauge(IDLE_PARTITIONS_METRIC, (Gauge<Integer>) counter::get);
        }
        return new ValidEventWatermarks(outOfOrderness, idleness, context.getInputActivityClock(), idlePartitions);
    }

    @Override
    public TimestampAssigner<ParsedRecord> createTimestampAssigner(TimestampAssignerSupplier.Context context) {
        return (record, kafkaTimestamp) -> record.isValid() ? record.event.eventTs : kafkaTimestamp;
    }
}
