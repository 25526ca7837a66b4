package dev.recount.stream.sink.topic;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes record batches to one topic in Kafka transactions that also move a {@link PublicationMarker}, so the
 * marker always says which batches are on the topic.
 *
 * <p>Opening it calls {@code initTransactions()} with the fixed transactional id: that fences any earlier producer
 * with the id and aborts whatever transaction it left open. Only then is the marker read (read_committed, so the
 * fetch waits for stable offsets), so it reflects every transaction that will ever commit under that id. Any
 * failure leaves the publisher closed; the next call opens it again from scratch.
 */
public final class TransactionalPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionalPublisher.class);

    private final String bootstrapServers;
    private final String topic;
    private final String transactionalId;
    private final String markerGroup;
    private final Properties producerOverrides;

    private KafkaProducer<byte[], byte[]> producer;
    private KafkaConsumer<byte[], byte[]> markerReader;
    private PublicationMarker marker;

    /**
     * @param transactionalId unique across the Kafka cluster to this publisher, stable across its restarts
     * @param markerGroup     the consumer group whose offset on partition 0 of {@code topic} is the marker
     */
    public TransactionalPublisher(
            String bootstrapServers,
            String topic,
            String transactionalId,
            String markerGroup,
            Properties producerOverrides) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.transactionalId = Objects.requireNonNull(transactionalId, "transactionalId");
        this.markerGroup = Objects.requireNonNull(markerGroup, "markerGroup");
        this.producerOverrides = Objects.requireNonNull(producerOverrides, "producerOverrides");
    }

    /** The last batch published, opening the publisher if needed. */
    public PublicationMarker marker() {
        open();
        return marker;
    }

    /** Publishes {@code records} and moves the marker to {@code next}, both or neither. */
    public void publish(List<TopicRecord> records, PublicationMarker next) {
        open();
        AtomicReference<Exception> sendError = new AtomicReference<>();
        try {
            producer.beginTransaction();
            for (TopicRecord r : records) {
                producer.send(new ProducerRecord<>(topic, null, null, r.key(), r.value()), (metadata, e) -> {
                    if (e != null) sendError.compareAndSet(null, e);
                });
            }
            producer.sendOffsetsToTransaction(Map.of(markerPartition(), next.toOffset()), markerReader.groupMetadata());
            producer.commitTransaction();
        } catch (RuntimeException e) {
            close(); // the next publisher's initTransactions aborts what this one left open
            throw e;
        }
        if (sendError.get() != null) {
            // commitTransaction fails when a send failed, so this only guards against a silent partial batch.
            close();
            throw new IllegalStateException("a record for " + topic + " was not sent", sendError.get());
        }
        marker = next;
    }

    private TopicPartition markerPartition() {
        return new TopicPartition(topic, 0);
    }

    private void open() {
        if (producer != null) return;
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.setProperty(ProducerConfig.CLIENT_ID_CONFIG, transactionalId);
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.putAll(producerOverrides);
        try {
            producer = new KafkaProducer<>(p);
            producer.initTransactions();
            Properties c = new Properties();
            c.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            c.setProperty(ConsumerConfig.GROUP_ID_CONFIG, markerGroup);
            // read_committed makes the offset fetch wait while a transactional offset is pending (requireStable).
            c.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            c.setProperty(ConsumerConfig.CLIENT_ID_CONFIG, transactionalId + ".marker");
            c.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            markerReader = new KafkaConsumer<>(c);
            marker = PublicationMarker.of(markerReader
                    .committed(Set.of(markerPartition()), Duration.ofSeconds(60))
                    .get(markerPartition()));
            LOG.info("publishing to {} as '{}'; marker {}", topic, transactionalId, marker);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void close() {
        if (producer != null) {
            try {
                producer.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                LOG.debug("closing the producer of {}: {}", transactionalId, e.toString());
            }
        }
        if (markerReader != null) {
            try {
                markerReader.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                LOG.debug("closing the marker reader of {}: {}", transactionalId, e.toString());
            }
        }
        producer = null;
        markerReader = null;
        marker = null;
    }
}
