package dev.recount.stream.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.EventValidator;
import dev.recount.stream.run.StreamSettings;
import java.util.List;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class KafkaInputTest {
    private static final TopicPartition P0 = new TopicPartition("ad-events", 0);
    private static final TopicPartition P1 = new TopicPartition("ad-events", 1);

    @Test
    void byDefaultTheConsumerHasNoResetPolicyWhateverTheStartingPositions() {
        for (Map<TopicPartition, Long> start : List.of(Map.<TopicPartition, Long>of(), Map.of(P0, 7L))) {
            OffsetsInitializer offsets = input(start, false).startingOffsets();
            assertThat(offsets.getAutoOffsetResetStrategy())
                    .as("a position no longer on the topic must fail the consumer, not move it (start " + start + ")")
                    .isEqualTo(OffsetResetStrategy.NONE);
        }
    }

    @Test
    void skippingDeletedInputGoesOnAtTheEarliestOffset() {
        assertThat(input(Map.of(P0, 7L), true).startingOffsets().getAutoOffsetResetStrategy())
                .isEqualTo(OffsetResetStrategy.EARLIEST);
    }

    @Test
    void theStartingPositionsAreTheSameEitherWay() {
        // A bounded run's stopping offset for a listed partition; an unlisted one (never committed) from its beginning.
        OffsetsInitializer.PartitionOffsetsRetriever retriever = new OffsetsInitializer.PartitionOffsetsRetriever() {
            @Override
            public Map<TopicPartition, Long> committedOffsets(java.util.Collection<TopicPartition> partitions) {
                return Map.of();
            }

            @Override
            public Map<TopicPartition, Long> endOffsets(java.util.Collection<TopicPartition> partitions) {
                return Map.of(P0, 100L, P1, 100L);
            }

            @Override
            public Map<TopicPartition, Long> beginningOffsets(java.util.Collection<TopicPartition> partitions) {
                return Map.of(P1, 3L);
            }

            @Override
            public Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndTimestamp> offsetsForTimes(
                    Map<TopicPartition, Long> timestampsToSearch) {
                return Map.of();
            }
        };
        Map<TopicPartition, Long> failing =
                input(Map.of(P0, 7L), false).startingOffsets().getPartitionOffsets(List.of(P0, P1), retriever);
        Map<TopicPartition, Long> skipping =
                input(Map.of(P0, 7L), true).startingOffsets().getPartitionOffsets(List.of(P0, P1), retriever);
        assertThat(failing).isEqualTo(Map.of(P0, 7L, P1, 3L)).isEqualTo(skipping);
    }

    private static KafkaInput input(Map<TopicPartition, Long> start, boolean skipDeletedInput) {
        StreamSettings settings = StreamSettings.from(RecountConfig.load(null, Map.of()));
        return new KafkaInput(
                "localhost:9",
                "ad-events",
                "g",
                new EventValidator(settings.eventTime().validation()),
                start,
                null,
                skipDeletedInput);
    }
}
