package dev.recount.faults;

import dev.recount.oracle.Key;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * What was read back from a pipeline's outputs, as plain data for the judge ({@link Accounting}): {@link
 * OutputReader} reads it from Kafka, PostgreSQL and the lake, a test writes it by hand.
 */
final class Outputs {
    private Outputs() {}

    /** One record of an output topic (backfill, dead letters): where it is on that topic, and its value. */
    record TopicRecord(Coordinates at, byte[] value) {}

    /** One row of the lake's files, every column of it. */
    record LakeRow(
            Coordinates at,
            String eventId,
            String eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            long recordTs,
            String requestId,
            String attributes) {}

    /**
     * Everything the stream job wrote, read after it drained.
     *
     * @param streamRows per set, its stream table's rows
     * @param archivedByHour what the stream recorded as archived per lake hour (lake_archived_rows), by hour start
     * @param streamLogs the job's logs, whole
     */
    record AfterDrain(
            Map<String, SortedMap<Key, List<BigInteger>>> streamRows,
            List<TopicRecord> backfill,
            List<TopicRecord> deadLetters,
            List<LakeRow> lake,
            Map<Long, Long> archivedByHour,
            String streamLogs) {}

    /**
     * What the serving views hold after backfill and reconcile.
     *
     * @param windows per set, its window_metrics view's rows
     * @param attribution per set with attribution, its attribution_metrics view's rows
     */
    record Served(
            Map<String, SortedMap<Key, List<BigInteger>>> windows,
            Map<String, SortedMap<Key, List<BigInteger>>> attribution) {}
}
