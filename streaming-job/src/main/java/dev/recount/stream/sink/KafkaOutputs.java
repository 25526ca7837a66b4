package dev.recount.stream.sink;

import dev.recount.core.event.BackfillRecord;
import dev.recount.stream.sink.topic.CheckpointedTopicSink;
import dev.recount.stream.sink.topic.TopicRecord;
import dev.recount.stream.source.DeadLetter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The dead-letter and backfill topics. Both are written exactly once, in step with the checkpoints
 * ({@link CheckpointedTopicSink}), so what a read_committed consumer sees always agrees with the metrics in
 * PostgreSQL: an event that was too late in a run that later failed over is not left on the backfill topic while
 * the replay counts it, and a batch is never lost or published twice, however a restart goes.
 */
public final class KafkaOutputs {
    private KafkaOutputs() {}

    /**
     * @param publicationId unique per job and sink across the Kafka cluster, and stable across restarts of the
     *                      same job (its transactional id and marker group)
     * @param lineage       the chain of runs this run continues (see StreamRun)
     */
    public static CheckpointedTopicSink<DeadLetter> deadLetters(
            String bootstrapServers, String topic, String publicationId, String lineage, Duration transactionTimeout) {
        // Keyed like the input record it came from.
        return new CheckpointedTopicSink<>(
                bootstrapServers,
                topic,
                publicationId,
                lineage,
                d -> new TopicRecord(d.key, d.json.getBytes(StandardCharsets.UTF_8)),
                producerConfig(transactionTimeout));
    }

    public static CheckpointedTopicSink<BackfillRecord> backfill(
            String bootstrapServers, String topic, String publicationId, String lineage, Duration transactionTimeout) {
        // Keyed by campaign_id, like the input (CONTRACT §1).
        return new CheckpointedTopicSink<>(
                bootstrapServers,
                topic,
                publicationId,
                lineage,
                r -> new TopicRecord(
                        r.event().campaignId.getBytes(StandardCharsets.UTF_8),
                        r.toJson().getBytes(StandardCharsets.UTF_8)),
                producerConfig(transactionTimeout));
    }

    /** Dead letters of window rows PostgreSQL refused (see WindowMetricsCommitter), on the dead-letter topic. */
    public static RejectedRows.Publication rejectedRows(
            String bootstrapServers, String deadLetterTopic, String publicationId, Duration transactionTimeout) {
        return new RejectedRows.Publication(
                bootstrapServers, deadLetterTopic, publicationId, producerConfig(transactionTimeout));
    }

    // Records get the producer's clock as timestamp, not event time: the broker rejects timestamps more than
    // log.message.timestamp.after.max.ms (1 h by default since Kafka 4.0) ahead of its clock, and an event may
    // legally be up to max-future ahead of a record timestamp that was itself ahead. The JSON values carry every
    // time that matters.
    private static Properties producerConfig(Duration transactionTimeout) {
        Properties p = new Properties();
        // A transaction lasts one publication, not a checkpoint interval (stream.kafka-transaction-timeout, 1 min by
        // default): a crashed publisher's open transaction holds back read_committed consumers at most that long,
        // and a restart later than that loses nothing (the records wait in the checkpoint, not in the transaction).
        p.setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, Long.toString(transactionTimeout.toMillis()));
        // Core caps a dead letter's raw value at 64 Ki characters (at most 384 KiB of JSON) and its key at 64 KiB, well
        // below this; backfill records are keyed by a validated campaign id.
        p.setProperty(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(1024 * 1024));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, "5");
        return p;
    }
}
