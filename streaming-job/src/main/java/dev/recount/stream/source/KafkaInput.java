package dev.recount.stream.source;

import dev.recount.core.event.EventValidator;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * The input source (CONTRACT §1): the input topic, validated in the deserializer.
 *
 * @param startOffsets where a run without a checkpoint to restore begins: empty = earliest (the first start);
 *                     after a finished --bounded run, the offsets it stopped at (unlisted partitions: earliest)
 * @param stopOffsets  null = unbounded; otherwise the latest offsets when this run started (--bounded)
 */
public record KafkaInput(
        String bootstrapServers,
        String topic,
        String groupId,
        EventValidator validator,
        Map<TopicPartition, Long> startOffsets,
        Map<TopicPartition, Long> stopOffsets) {

    public KafkaInput {
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(validator, "validator");
        startOffsets = Map.copyOf(Objects.requireNonNull(startOffsets, "startOffsets"));
        stopOffsets = stopOffsets == null ? null : Map.copyOf(stopOffsets);
    }

    public boolean bounded() {
        return stopOffsets != null;
    }

    public Source<ParsedRecord, ?, ?> source() {
        KafkaSourceBuilder<ParsedRecord> builder = KafkaSource.<ParsedRecord>builder()
                .setBootstrapServers(bootstrapServers)
                .setTopics(topic)
                // Offsets are committed to this group on each checkpoint: only for monitoring consumer lag, the
                // job itself resumes from its checkpoints.
                .setGroupId(groupId)
                .setStartingOffsets(
                        startOffsets.isEmpty()
                                ? OffsetsInitializer.earliest()
                                : OffsetsInitializer.offsets(startOffsets, OffsetResetStrategy.EARLIEST))
                .setDeserializer(new ValidatingDeserializer(validator))
                .setProperty("client.id.prefix", groupId)
                // Records of aborted producer transactions (`./recount produce` writes in transactions) are never
                // input; committed ones and non-transactional records are read as usual.
                .setProperty("isolation.level", "read_committed");
        if (!bounded()) return builder.build();
        KafkaSource<ParsedRecord> bounded = builder.setBounded(
                        OffsetsInitializer.offsets(stopOffsets, OffsetResetStrategy.EARLIEST))
                .build();
        return new BoundedResumeKafkaSource<>(bounded, stopOffsets);
    }
}
