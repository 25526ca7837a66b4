package dev.recount.stream.run;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Offsets of the input topic a start reads: the latest (where a --bounded run stops), the earliest still on the
 * topic, and the job's consumer group's (see {@link DeletedInput}).
 */
final class KafkaOffsets {
    private KafkaOffsets() {}

    /** The partitions of {@code topic}, read with {@code admin} (connected to {@code bootstrapServers}). */
    static List<TopicPartition> partitions(Admin admin, String bootstrapServers, String topic) {
        TopicDescription d = await(admin.describeTopics(List.of(topic)).allTopicNames(), bootstrapServers, topic)
                .get(topic);
        return d.partitions().stream()
                .map(info -> new TopicPartition(topic, info.partition()))
                .toList();
    }

    /** The latest offset of each of {@code partitions}. */
    static Map<TopicPartition, Long> latest(Admin admin, String bootstrapServers, List<TopicPartition> partitions) {
        return offsets(admin, bootstrapServers, partitions, OffsetSpec::latest);
    }

    /** The earliest offset still on the topic, per partition: everything before it was deleted. */
    static Map<TopicPartition, Long> earliest(Admin admin, String bootstrapServers, List<TopicPartition> partitions) {
        return offsets(admin, bootstrapServers, partitions, OffsetSpec::earliest);
    }

    /**
     * The offsets consumer group {@code group} committed for {@code topic} (the job commits its position there with
     * every completed checkpoint); partitions it never committed are absent.
     */
    static Map<TopicPartition, Long> committed(Admin admin, String bootstrapServers, String group, String topic) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> all =
                await(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(), bootstrapServers, topic);
        all.forEach((tp, meta) -> {
            if (meta != null && tp.topic().equals(topic)) offsets.put(tp, meta.offset());
        });
        return offsets;
    }

    private static Map<TopicPartition, Long> offsets(
            Admin admin, String bootstrapServers, List<TopicPartition> partitions, Supplier<OffsetSpec> spec) {
        if (partitions.isEmpty()) return Map.of();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        partitions.forEach(tp -> request.put(tp, spec.get()));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> result = await(
                admin.listOffsets(request).all(),
                bootstrapServers,
                partitions.get(0).topic());
        Map<TopicPartition, Long> offsets = new HashMap<>();
        result.forEach((tp, info) -> offsets.put(tp, info.offset()));
        return offsets;
    }

    private static <T> T await(org.apache.kafka.common.KafkaFuture<T> future, String bootstrapServers, String topic) {
        try {
            return future.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "cannot read the offsets of topic '" + topic + "' from " + bootstrapServers + ": "
                            + e.getCause().getMessage(),
                    e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka at " + bootstrapServers + " did not answer within 30 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
