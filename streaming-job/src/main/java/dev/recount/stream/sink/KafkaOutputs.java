package dev.recount.stream.sink;

import dev.recount.core.event.BackfillRecord;
import dev.recount.stream.source.DeadLetter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The dead-letter and backfill topics. Both are written EXACTLY_ONCE (Kafka transactions committed with the
 * checkpoint), so what a read_committed consumer sees always agrees with the metrics in PostgreSQL: an event that
 * was too late in a run that later failed over is not left on the backfill topic while the replay counts it.
 */
public final class KafkaOutputs {
    /**
     * Below the broker's default transaction.max.timeout.ms (15 min) and far above any checkpoint interval: a
     * transaction stays open from one checkpoint to the next.
     */
    static final String TRANSACTION_TIMEOUT_MS = Integer.toString(10 * 60 * 1000);

    private KafkaOutputs() {}

    /**
     * @param transactionalIdPrefix unique per job and sink across the Kafka cluster, and stable across restarts of
     *                              the same job (recovery aborts the transactions of the failed attempt by it)
     */
    public static KafkaSink<DeadLetter> deadLetters(String bootstrapServers, String topic, String transactionalIdPrefix) {
        return KafkaSink.<DeadLetter>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(new DeadLetterSerializer(topic))
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(transactionalIdPrefix)
                .setKafkaProducerConfig(producerConfig())
                .build();
    }

    public static KafkaSink<BackfillRecord> backfill(String bootstrapServers, String topic, String transactionalIdPrefix) {
        return KafkaSink.<BackfillRecord>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(new BackfillSerializer(topic))
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(transactionalIdPrefix)
                .setKafkaProducerConfig(producerConfig())
                .build();
    }

    // Records get the producer's clock as timestamp (null below), not event time: the broker rejects timestamps
    // more than log.message.timestamp.after.max.ms (1 h by default since Kafka 4.0) ahead of its clock, and an
    // event may legally be up to max-future ahead of a record timestamp that was itself ahead. The JSON values
    // carry every time that matters.
    private static Properties producerConfig() {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
        // Dead-letter values are capped at 64 K characters by core (up to ~256 KB of UTF-8), well below this.
        p.setProperty(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(1024 * 1024));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        return p;
    }

    /** Keyed like the input record it came from. */
    static final class DeadLetterSerializer implements KafkaRecordSerializationSchema<DeadLetter> {
        private static final long serialVersionUID = 1L;
        private final String topic;

        DeadLetterSerializer(String topic) {
            this.topic = topic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(DeadLetter d, KafkaSinkContext context, Long timestamp) {
            return new ProducerRecord<>(topic, null, null, d.key, d.json.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Keyed by campaign_id, like the input (CONTRACT §1). */
    static final class BackfillSerializer implements KafkaRecordSerializationSchema<BackfillRecord> {
        private static final long serialVersionUID = 1L;
        private final String topic;

        BackfillSerializer(String topic) {
            this.topic = topic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(BackfillRecord r, KafkaSinkContext context, Long timestamp) {
            return new ProducerRecord<>(topic, null, null, r.event().campaignId.getBytes(StandardCharsets.UTF_8),
                    r.toJson().getBytes(StandardCharsets.UTF_8));
        }
    }
}
