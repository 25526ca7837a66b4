package dev.recount.batch;

import dev.recount.core.event.BackfillRecord;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/**
 * What one {@code affected} run read from the backfill topic: per partition, where it started (the group's
 * committed offset) and how far it read, and every record in between.
 *
 * @param startOffsets per partition, the first offset read (the group's committed position)
 * @param readUntil    per partition, the offset after the last record read (everything below it was seen)
 * @param entries      the records read, in partition then offset order
 * @param truncated    true when the run stopped at its record limit before the end of the topic
 */
record BackfillBatch(
        Map<TopicPartition, Long> startOffsets,
        Map<TopicPartition, Long> readUntil,
        List<Entry> entries,
        boolean truncated) {

    /** One record: the parsed backfill record, or null with the reason it could not be parsed. */
    record Entry(TopicPartition partition, long offset, BackfillRecord record, String malformed) {}

    static final Comparator<TopicPartition> PARTITION_ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    /**
     * The offsets to commit once the run's results are durable: per partition, up to (not including) the
     * first record that is not {@code done} — it and everything after it are read again next time — or
     * everything read when all are done. Partitions that would not move are left out.
     */
    Map<TopicPartition, Long> offsetsToCommit(Predicate<Entry> done) {
        Map<TopicPartition, Long> target = new TreeMap<>(PARTITION_ORDER);
        target.putAll(readUntil);
        Map<TopicPartition, Long> firstNotDone = new LinkedHashMap<>();
        for (Entry e : entries) {
            if (!done.test(e)) firstNotDone.merge(e.partition(), e.offset(), Math::min);
        }
        firstNotDone.forEach((tp, offset) -> target.merge(tp, offset, Math::min));
        target.entrySet().removeIf(t -> t.getValue() <= startOffsets.getOrDefault(t.getKey(), 0L));
        return target;
    }
}
