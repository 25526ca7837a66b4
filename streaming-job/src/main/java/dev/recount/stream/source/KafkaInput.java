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
 * @param skipDeletedInput what the consumer does at a position no longer on the topic (retention or
 *                     {@code kafka-delete-records} removed records before the job read them, or the topic was
 *                     recreated): false (the default) fails the job, which then restarts without skipping anything
 *                     until someone decides; true (--skip-deleted-input) goes on at the earliest offset still there
 */
public record KafkaInput(
        String bootstrapServers,
        String topic,
        String groupId,
        EventValidator validator,
        Map<TopicPartition, Long> startOffsets,
        Map<TopicPartition, Long> stopOffsets,
        boolean skipDeletedInput) {

    public KafkaInput {
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(validator, "validator");
        startOffsets = Map.copyOf(Objects.requireNonNull(startOffsets, "startOffsets"));
        stopOffsets = stopOffsets == null ? null : Map.copyOf(stopOffsets);
    }

    /** A run that fails rather than skip input deleted before it was read. */
    public KafkaInput(
            String bootstrapServers,
            String topic,
            String groupId,
            EventValidator validator,
            Map<TopicPartition, Long> startOffsets,
            Map<TopicPartition, Long> stopOffsets) {
        this(bootstrapServers, topic, groupId, validator, startOffsets, stopOffsets, false);
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
                .setStartingOffsets(startingOffsets())
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

    /**
     * Where each partition starts when no checkpoint says (the earliest offset, or a bounded run's stopping offset),
     * and what the consumer does at a position that is no longer on the topic. The connector sets the consumer's
     * {@code auto.offset.reset} from this initializer, and that one setting also decides what happens to a position
     * restored from a checkpoint: with Kafka's usual {@code earliest}, a job that was down longer than the topic's
     * retention would jump over the deleted records, and their events would be in no row, no lake file and on no
     * backfill record, with nothing but an INFO line of the Kafka client to say so.
     */
    OffsetsInitializer startingOffsets() {
        OffsetsInitializer positions = startOffsets.isEmpty()
                ? OffsetsInitializer.earliest()
                : OffsetsInitializer.offsets(startOffsets, OffsetResetStrategy.EARLIEST);
        return skipDeletedInput ? positions : new FailAtDeletedInput(positions);
    }
}
