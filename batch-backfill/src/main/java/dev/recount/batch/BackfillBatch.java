package dev.recount.batch;

import dev.recount.core.event.BackfillRecord;
import dev.recount.db.tables.BackfillWaitingTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * What one {@code affected} run checks: the records it read from the backfill topic (per partition, from the group's
 * committed offset up to how far it read) and the records earlier runs left waiting ({@code backfill_waiting}).
 *
 * @param startOffsets per partition, the first offset read (the group's committed position)
 * @param readUntil    per partition, the offset after the last record read (everything below it was seen)
 * @param entries      the records to check, in partition then offset order, each once
 * @param truncated    true when the run stopped at its record limit before the end of the topic
 */
record BackfillBatch(
        Map<TopicPartition, Long> startOffsets,
        Map<TopicPartition, Long> readUntil,
        List<Entry> entries,
        boolean truncated) {

    /**
     * One record: the parsed backfill record, or null with the reason it could not be parsed.
     *
     * @param waiting whether {@code backfill_waiting} holds it (an earlier run could not settle it)
     */
    record Entry(TopicPartition partition, long offset, BackfillRecord record, String malformed, boolean waiting) {
        BackfillWaitingTable.Position position() {
            return new BackfillWaitingTable.Position(partition.partition(), offset);
        }
    }

    static final Comparator<TopicPartition> PARTITION_ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    static final Comparator<Entry> ENTRY_ORDER =
            Comparator.comparing(Entry::partition, PARTITION_ORDER).thenComparingLong(Entry::offset);

    /**
     * This batch with the records waiting on {@code topic} added. A record both read and waiting (a run whose
     * offset commit failed after its results were committed) is checked once, as a waiting one.
     *
     * @throws IllegalStateException where the topic holds another record at a waiting one's position: only a topic
     *     deleted and created again does (Kafka forgets the group's offsets with it), and checking either would lose
     *     the other
     */
    BackfillBatch withWaiting(String topic, List<BackfillWaitingTable.Waiting> waiting) {
        if (waiting.isEmpty()) return this;
        Map<BackfillWaitingTable.Position, Entry> merged = new HashMap<>();
        for (Entry e : entries) merged.put(e.position(), e);
        for (BackfillWaitingTable.Waiting w : waiting) {
            Entry held = parseWaiting(new TopicPartition(topic, w.position().partition()), w);
            Entry read = merged.get(w.position());
            // Read again as malformed: a release before this one accepted it (bytes that are not UTF-8, a key given
            // twice) and kept it waiting, and its offsets were not committed. The waiting copy is that record.
            boolean malformedNow = read != null && read.record() == null;
            if (read != null && !malformedNow && !sameRecord(read, held)) {
                throw new IllegalStateException("backfill topic '" + topic + "' holds another record at "
                        + held.partition() + "@" + held.offset()
                        + " than the one waiting there in backfill_waiting: the"
                        + " topic was deleted and created again. Recompute with `backfill range` the days of the"
                        + " topic's waiting records (SELECT record::json->'event'->>'event_ts' FROM backfill_waiting),"
                        + " then delete the topic's rows of backfill_waiting and run again");
            }
            merged.put(w.position(), held);
        }
        List<Entry> all = new ArrayList<>(merged.values());
        all.sort(ENTRY_ORDER);
        return new BackfillBatch(startOffsets, readUntil, List.copyOf(all), truncated);
    }

    /**
     * Whether a record read and a waiting one name the same too-late event: its id and the input record it came
     * from. Not the JSON text, which a release may write differently.
     */
    private static boolean sameRecord(Entry read, Entry waiting) {
        if (read.record() == null || waiting.record() == null) return false;
        BackfillRecord r = read.record();
        BackfillRecord w = waiting.record();
        return r.event().eventId.equals(w.event().eventId)
                && r.topic().equals(w.topic())
                && r.partition() == w.partition()
                && r.offset() == w.offset();
    }

    private static Entry parseWaiting(TopicPartition tp, BackfillWaitingTable.Waiting w) {
        try {
            return new Entry(tp, w.position().offset(), BackfillRecord.fromJson(w.record()), null, true);
        } catch (IllegalArgumentException e) {
            // Only a hand edit of the table gets here: settled as malformed, as on the topic.
            return new Entry(tp, w.position().offset(), null, e.getMessage(), true);
        }
    }

    /**
     * The offsets to commit once the run's results, and the records left waiting, are durable: per partition, how
     * far it read. Every record below is then settled or held in {@code backfill_waiting}, so none holds up the
     * records behind it. Partitions that would not move are left out.
     */
    Map<TopicPartition, Long> offsetsToCommit() {
        Map<TopicPartition, Long> target = new TreeMap<>(PARTITION_ORDER);
        target.putAll(readUntil);
        target.entrySet().removeIf(t -> t.getValue() <= startOffsets.getOrDefault(t.getKey(), 0L));
        return target;
    }
}
