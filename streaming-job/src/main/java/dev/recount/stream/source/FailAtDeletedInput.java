package dev.recount.stream.source;

import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializerValidator;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * The same starting positions as {@code positions}, with no reset policy for the consumer ({@code
 * auto.offset.reset=none}): a position that is no longer on the topic makes the consumer throw {@code
 * OffsetOutOfRangeException} instead of jumping to the earliest offset, so the job fails and restarts from its last
 * checkpoint, counting nothing twice and skipping nothing, until it is started with {@code --skip-deleted-input}.
 *
 * <p>The starting positions never need the policy: the earliest offset is asked for explicitly (the reader seeks to
 * the beginning), and a partition a bounded run's offsets do not list is looked up by the enumerator.
 */
final class FailAtDeletedInput implements OffsetsInitializer, OffsetsInitializerValidator {
    private static final long serialVersionUID = 1L;

    private final OffsetsInitializer positions;

    FailAtDeletedInput(OffsetsInitializer positions) {
        this.positions = positions;
    }

    @Override
    public Map<TopicPartition, Long> getPartitionOffsets(
            Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
        return positions.getPartitionOffsets(partitions, retriever);
    }

    @Override
    public OffsetResetStrategy getAutoOffsetResetStrategy() {
        return OffsetResetStrategy.NONE;
    }

    @Override
    public void validate(Properties kafkaSourceProperties) {
        if (positions instanceof OffsetsInitializerValidator v) v.validate(kafkaSourceProperties);
    }
}
