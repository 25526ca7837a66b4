package dev.recount.tools.generate;

import dev.recount.tools.produce.RecordProducers;
import java.util.Iterator;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Sends generated records to Kafka with their partition and simulated arrival time as record timestamp,
 * idempotently (acks=all), optionally paced to a rate. Fails on the first send error instead of dropping records.
 */
public final class KafkaTrafficSender {
    private KafkaTrafficSender() {}

    /** @return the number of records sent, all acknowledged */
    public static long send(
            String bootstrapServers,
            String topic,
            Iterator<GeneratedRecord> records,
            double ratePerSecond,
            Progress progress) {
        long n = 0;
        long startNanos = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(RecordProducers.idempotentBytes(bootstrapServers, "recount-generate"))) {
            while (records.hasNext()) {
                GeneratedRecord r = records.next();
                if (ratePerSecond > 0) RecordProducers.pace(startNanos, n, ratePerSecond);
                producer.send(
                        new ProducerRecord<>(topic, r.partition(), r.arrivalTs(), r.key(), r.value()), (meta, e) -> {
                            if (e != null) progress.fail(e);
                        });
                progress.tick(++n);
                progress.rethrow();
            }
            producer.flush();
            progress.rethrow();
        }
        return n;
    }
}
