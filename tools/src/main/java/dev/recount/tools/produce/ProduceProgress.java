package dev.recount.tools.produce;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The transactions of one `produce` run and how far they got: every transaction also commits the number of lines
 * done as an offset of the consumer group {@code recount-produce.<topic>.<file id>} on partition 0 of the topic, so
 * the broker makes lines and progress visible together. A rerun reads that offset and continues after it.
 */
final class ProduceProgress implements AutoCloseable {
    /** Sending stopped; {@link #linesDone} lines are committed. */
    static final class Stopped extends RuntimeException {
        final long linesDone;

        Stopped(long linesDone, Exception cause) {
            super(cause.getMessage(), cause);
            this.linesDone = linesDone;
        }
    }

    private final TopicPartition markerPartition;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> markerReader;
    private final AtomicReference<Exception> sendError = new AtomicReference<>();
    private long linesDone;

    ProduceProgress(String bootstrap, String topic, String fileId) {
        String id = "recount-produce." + topic + "." + fileId;
        this.markerPartition = new TopicPartition(topic, 0);
        Map<String, Object> p = new HashMap<>(RecordProducers.idempotentBytes(bootstrap, "recount-produce"));
        // The id of this file's transactions: a second `produce` of the same file fences the first.
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000);
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, id);
        // read_committed: the offset fetch waits while a transactional offset is still pending.
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = null;
        KafkaConsumer<byte[], byte[]> reader = null;
        try {
            producer = new KafkaProducer<>(p);
            producer.initTransactions(); // aborts what a killed earlier run of this file left open
            reader = new KafkaConsumer<>(c);
            OffsetAndMetadata done = reader.committed(Set.of(markerPartition), Duration.ofSeconds(30))
                    .get(markerPartition);
            linesDone = done == null ? 0 : done.offset();
        } catch (KafkaException e) {
            if (producer != null) producer.close(Duration.ZERO);
            if (reader != null) reader.close();
            throw new Stopped(0, e);
        }
        this.producer = producer;
        this.markerReader = reader;
    }

    /** Lines an earlier run of this file committed (0 if none). */
    long linesDone() {
        return linesDone;
    }

    void begin() {
        try {
            producer.beginTransaction();
        } catch (KafkaException e) {
            throw new Stopped(linesDone, e);
        }
    }

    void send(ProducerRecord<byte[], byte[]> record) {
        if (sendError.get() != null) throw new Stopped(linesDone, sendError.get());
        try {
            producer.send(record, (meta, e) -> {
                if (e != null) sendError.compareAndSet(null, e);
            });
        } catch (KafkaException e) {
            throw new Stopped(linesDone, e);
        }
    }

    /** Commits the open transaction together with "lines 1..lineNo are done". */
    void commit(long lineNo) {
        try {
            producer.sendOffsetsToTransaction(
                    Map.of(markerPartition, new OffsetAndMetadata(lineNo)), markerReader.groupMetadata());
            producer.commitTransaction();
        } catch (KafkaException e) {
            throw new Stopped(linesDone, e);
        }
        if (sendError.get() != null) throw new Stopped(linesDone, sendError.get());
        linesDone = lineNo;
    }

    @Override
    public void close() {
        // Closing aborts an open transaction: its lines are sent again by the next run.
        producer.close(Duration.ofSeconds(5));
        markerReader.close(Duration.ofSeconds(5));
    }
}
