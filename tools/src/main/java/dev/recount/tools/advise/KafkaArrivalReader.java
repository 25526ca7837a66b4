package dev.recount.tools.advise;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the records of a topic whose Kafka timestamps fall in {@code [from, to)} into an {@link ArrivalSample}.
 *
 * <p>Per partition it seeks with {@code offsetsForTimes(from)} and stops at {@code offsetsForTimes(to)} (else the
 * end offset at start), so it reads only that stretch and ends even while producers keep writing. Record timestamps
 * can step back within a partition (CreateTime), so records inside the offset range but outside the time range are
 * skipped. No consumer group: nothing is committed and no running consumer is disturbed.
 */
final class KafkaArrivalReader {
    private static final Duration POLL = Duration.ofMillis(500);

    private final String bootstrapServers;
    private final Duration stallTimeout;

    KafkaArrivalReader(String bootstrapServers, Duration stallTimeout) {
        this.bootstrapServers = bootstrapServers;
        this.stallTimeout = stallTimeout;
    }

    /** What was read; {@code truncated} when {@code maxRecords} stopped it before the end of the range. */
    record Read(long records, long outsideRange, boolean truncated) {}

    Read read(String topic, Instant from, Instant to, long maxRecords, ArrivalSample.Builder sample) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG,
                "recount-advise",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName(),
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                5_000,
                ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                30_000);
        long fromMs = from.toEpochMilli();
        long toMs = to.toEpochMilli();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("topic " + topic + " does not exist at " + bootstrapServers);
            }
            List<TopicPartition> partitions = new ArrayList<>();
            infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));

            Map<TopicPartition, Long> starts = offsetsAt(consumer, partitions, fromMs);
            Map<TopicPartition, Long> stops = offsetsAt(consumer, partitions, toMs);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            Map<TopicPartition, Long> stopAt = new HashMap<>();
            for (TopicPartition tp : partitions) {
                Long start = starts.get(tp);
                if (start == null) continue; // nothing at or after `from` on this partition
                long stop = stops.get(tp) != null ? stops.get(tp) : ends.get(tp);
                if (stop > start) stopAt.put(tp, stop);
            }
            if (stopAt.isEmpty()) return new Read(0, 0, false);

            consumer.assign(stopAt.keySet());
            for (TopicPartition tp : stopAt.keySet()) consumer.seek(tp, starts.get(tp));

            Set<TopicPartition> open = new HashSet<>(stopAt.keySet());
            long records = 0;
            long outside = 0;
            long lastProgress = System.nanoTime();
            while (!open.isEmpty()) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(POLL);
                if (batch.isEmpty()) {
                    if (System.nanoTime() - lastProgress > stallTimeout.toNanos()) {
                        throw new IllegalStateException("no records from " + topic + " at " + bootstrapServers + " for "
                                + stallTimeout.toSeconds() + " s although partitions " + open + " are not read up to"
                                + " the end of the range");
                    }
                    continue;
                }
                lastProgress = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (!open.contains(tp) || r.offset() >= stopAt.get(tp)) continue;
                    if (r.timestamp() < fromMs || r.timestamp() >= toMs) {
                        outside++;
                    } else {
                        sample.offer(r.topic(), r.partition(), r.offset(), r.timestamp(), r.value());
                        records++;
                        if (records >= maxRecords) return new Read(records, outside, true);
                    }
                    if (r.offset() + 1 >= stopAt.get(tp)) open.remove(tp);
                }
                // A partition whose last records were transaction markers never shows its last offset: check positions.
                for (TopicPartition tp : new ArrayList<>(open)) {
                    if (consumer.position(tp) >= stopAt.get(tp)) open.remove(tp);
                }
                consumer.pause(partitionsNotIn(stopAt.keySet(), open));
            }
            return new Read(records, outside, false);
        } catch (KafkaException e) {
            throw new IllegalStateException(
                    "reading " + topic + " at " + bootstrapServers + " failed: " + e.getMessage(), e);
        }
    }

    private static Map<TopicPartition, Long> offsetsAt(
            KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions, long timestamp) {
        Map<TopicPartition, Long> query = new HashMap<>();
        partitions.forEach(tp -> query.put(tp, timestamp));
        Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
        Map<TopicPartition, Long> out = new HashMap<>();
        found.forEach((tp, ot) -> {
            if (ot != null) out.put(tp, ot.offset());
        });
        return out;
    }

    private static Set<TopicPartition> partitionsNotIn(Set<TopicPartition> all, Set<TopicPartition> open) {
        Set<TopicPartition> done = new HashSet<>(all);
        done.removeAll(open);
        return done;
    }
}
