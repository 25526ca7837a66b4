package dev.recount.batch;

import dev.recount.core.event.BackfillRecord;
import dev.recount.core.time.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the backfill topic for {@code affected}: everything from the consumer group's committed offsets up to
 * the end offsets as of the start of the run (records appended meanwhile are left for the next run).
 * Partitions are assigned explicitly rather than subscribed: no group rebalance to wait for, and the run's
 * advisory lock already guarantees a single reader. Offsets are committed by the caller, never automatically.
 */
final class BackfillTopicReader {
    private static final Logger LOG = LoggerFactory.getLogger(BackfillTopicReader.class);
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(200);

    private BackfillTopicReader() {}

    static KafkaConsumer<byte[], byte[]> newConsumer(String bootstrapServers, String groupId) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "recount-backfill-affected");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // Every position is set explicitly (the group's offset, or the beginning for a group that never committed), so
        // the consumer needs no reset policy; without one, records deleted under it make the read fail instead of
        // being jumped over (see readAvailable).
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        // The stream job writes the topic in transactions; records of aborted ones were never "too late".
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // Bytes, decoded strictly by BackfillRecord: a String deserializer would turn bytes that are not UTF-8 into
        // U+FFFD and
        // hand on a record that then names an event no lake holds, and waits for ever.
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    /**
     * @param skipDeleted where records after the group's offset were deleted before they were read (the topic's
     *     retention ran out before this command did), go on at the earliest offset still there; otherwise fail, since
     *     the windows those records named would never be recomputed by this command
     */
    static BackfillBatch readAvailable(
            Consumer<byte[], byte[]> consumer, String topic, int maxRecords, Duration timeout, boolean skipDeleted) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, METADATA_TIMEOUT);
        if (infos == null || infos.isEmpty()) {
            throw new IllegalStateException("backfill topic '" + topic + "' does not exist (setting topics.backfill)");
        }
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo i : infos) partitions.add(new TopicPartition(topic, i.partition()));
        partitions.sort(BackfillBatch.PARTITION_ORDER);
        consumer.assign(partitions);
        Map<TopicPartition, OffsetAndMetadata> committed =
                consumer.committed(new HashSet<>(partitions), METADATA_TIMEOUT);
        Map<TopicPartition, Long> earliest = consumer.beginningOffsets(partitions, METADATA_TIMEOUT);
        List<String> deleted = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata c = committed.get(tp);
            long first = earliest.get(tp);
            if (c != null && c.offset() < first) {
                deleted.add("partition " + tp.partition() + ": offsets " + c.offset() + " to " + (first - 1));
                consumer.seek(tp, first);
            } else if (c != null) {
                consumer.seek(tp, c.offset());
            } else {
                consumer.seekToBeginning(List.of(tp));
            }
        }
        if (!deleted.isEmpty()) {
            String gap = "records of backfill topic '" + topic + "' were deleted before `backfill affected` read them ("
                    + String.join("; ", deleted) + ")";
            if (!skipDeleted) {
                throw new IllegalStateException(gap + ": the windows their too-late events fall in would never be "
                        + "recomputed by this command. Recompute with `backfill range` the days since the last "
                        + "successful `affected` run, back by validation.max-past; then run `backfill affected "
                        + "--skip-deleted-input` once to go on from the earliest offset still there");
            }
            LOG.warn("{}; skipped (--skip-deleted-input): the windows they named are recomputed only by a range", gap);
        }
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions, METADATA_TIMEOUT);
        List<String> beyond = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata c = committed.get(tp);
            if (c != null && c.offset() > end.get(tp))
                beyond.add("partition " + tp.partition() + ": offset " + c.offset() + ", end " + end.get(tp));
        }
        if (!beyond.isEmpty()) {
            // Read on, such a run would see nothing until the topic grew past the offsets again: what it got
            // meanwhile would never be read.
            throw new IllegalStateException("the group's offsets on backfill topic '" + topic + "' are beyond its end ("
                    + String.join("; ", beyond) + "): the topic lost records (an unclean leader election, a restore)."
                    + " Recompute with `backfill range` the days since the last successful `affected` run, back by"
                    + " validation.max-past; then reset the group's offset of each partition to its end named here"
                    + " (kafka-consumer-groups --reset-offsets --to-offset); the records in backfill_waiting stay");
        }
        Map<TopicPartition, Long> start = new HashMap<>();
        Map<TopicPartition, Long> readUntil = new HashMap<>();
        for (TopicPartition tp : partitions) {
            long position = consumer.position(tp, METADATA_TIMEOUT);
            start.put(tp, position);
            readUntil.put(tp, position);
        }
        List<BackfillBatch.Entry> entries = new ArrayList<>();
        // Read up to the end offsets (or the record limit); each poll waits up to POLL itself, so no pause between.
        boolean done;
        try {
            done = Wait.upTo(timeout).every(Duration.ZERO).until(() -> {
                if (reachedEnd(consumer, partitions, end) || entries.size() >= maxRecords) return true;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(tp)) continue;
                    entries.add(parse(tp, r.offset(), r.value()));
                    readUntil.put(tp, r.offset() + 1);
                }
                return false;
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading backfill topic '" + topic + "'", e);
        }
        if (!done) {
            throw new IllegalStateException("reading backfill topic '" + topic + "' up to its end offsets " + end
                    + " did not finish within " + timeout);
        }
        boolean truncated = !reachedEnd(consumer, partitions, end) && entries.size() >= maxRecords;
        for (TopicPartition tp : partitions) {
            // Whole partition seen: also step over transaction markers and aborted records below the end.
            if (consumer.position(tp, METADATA_TIMEOUT) >= end.get(tp)) readUntil.put(tp, end.get(tp));
        }
        entries.sort(BackfillBatch.ENTRY_ORDER);
        LOG.info(
                "read {} records from backfill topic {} ({} partitions, from {} to {}){}",
                entries.size(),
                topic,
                partitions.size(),
                start,
                readUntil,
                truncated ? ", stopped at the record limit" : "");
        return new BackfillBatch(Map.copyOf(start), Map.copyOf(readUntil), List.copyOf(entries), truncated);
    }

    private static boolean reachedEnd(
            Consumer<byte[], byte[]> consumer, List<TopicPartition> partitions, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : partitions) {
            if (consumer.position(tp, METADATA_TIMEOUT) < end.get(tp)) return false;
        }
        return true;
    }

    private static BackfillBatch.Entry parse(TopicPartition tp, long offset, byte[] value) {
        try {
            return new BackfillBatch.Entry(tp, offset, BackfillRecord.fromJson(value), null, false);
        } catch (IllegalArgumentException e) {
            LOG.error(
                    "record {}-{}@{} of the backfill topic is skipped, {}",
                    tp.topic(),
                    tp.partition(),
                    offset,
                    e.getMessage());
            return new BackfillBatch.Entry(tp, offset, null, e.getMessage(), false);
        }
    }
}
