package dev.recount.deploy.generate;

import java.util.Iterator;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Sends generated records to Kafka with their partition and simulated arrival time as record timestamp,
 * idempotently (acks=all), optionally paced to a rate. Fails on the first send error instead of dropping records.
 */
public final class KafkaTrafficSender {
    private KafkaTrafficSender() {}

    /** @return the number of records sent, all acknowledged */
    public static long send(String bootstrapServers, String topic, Iterator<GeneratedRecord> records, double ratePerSecond,
                            Progress progress) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 * 1024));
        long n = 0;
        long startNanos = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            while (records.hasNext()) {
                GeneratedRecord r = records.next();
                if (ratePerSecond > 0) {
                    long wait = startNanos + (long) (n * 1e9 / ratePerSecond) - System.nanoTime();
                    if (wait > 0) LockSupport.parkNanos(wait); // pacing to the requested rate, not synchronisation
                }
                producer.send(new ProducerRecord<>(topic, r.partition(), r.arrivalTs(), r.key(), r.value()),
                        (meta, e) -> { if (e != null) progress.fail(e); });
                progress.tick(++n);
                progress.rethrow();
            }
            producer.flush();
            progress.rethrow();
        }
        return n;
    }
}
