package dev.recount.stream.run;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;

/** The latest offsets of a topic, where a --bounded run stops. */
final class KafkaOffsets {
    private KafkaOffsets() {}

    /** The latest offset of every partition of {@code topic}, read with {@code admin} (connected to {@code bootstrapServers}). */
    static Map<TopicPartition, Long> latest(Admin admin, String bootstrapServers, String topic) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(topic);
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            d.partitions()
                    .forEach(info -> request.put(new TopicPartition(topic, info.partition()), OffsetSpec.latest()));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> result =
                    admin.listOffsets(request).all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, Long> offsets = new HashMap<>();
            result.forEach((tp, info) -> offsets.put(tp, info.offset()));
            return offsets;
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "cannot read the latest offsets of topic '" + topic + "' from " + bootstrapServers + ": "
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
