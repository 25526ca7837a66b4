package dev.recount.bench;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Steady traffic for the freshness measurement: R valid events per second for S seconds, event time = the wall
 * clock minus up to 2 s of disorder, 100 campaigns x 5 channels, 90/8/2 % impressions/clicks/conversions.
 * (./recount generate puts most of a short main range into one window, so it cannot pace event time.)
 * Args: topic rate seconds. Prints what it offered every 10 s and the rate it achieved.
 */
public final class RateProducer {
    public static void main(String[] args) throws Exception {
        String topic = args[0];
        long rate = Long.parseLong(args[1]);
        long seconds = Long.parseLong(args[2]);
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("KAFKA_BOOTSTRAP_SERVERS"));
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        long start = System.currentTimeMillis();
        long sent = 0;
        long lastReport = start;
        long sentAtReport = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            while (true) {
                long now = System.currentTimeMillis();
                if (now - start >= seconds * 1000) break;
                long due = (now - start) * rate / 1000;
                for (; sent < due; sent++) {
                    long ts = now - (sent * 7919) % 2000;
                    int key = (int) ((sent * 2654435761L) % 500);
                    EventType type = sent % 50 == 0
                            ? EventType.CONVERSION
                            : sent % 12 == 0 ? EventType.CLICK : EventType.IMPRESSION;
                    String campaign = "camp-" + key / 5;
                    AdEvent e = new AdEvent(
                            "f-" + start + "-" + sent, type, ts, campaign, "ch-" + key % 5, 1_500, null, 0, 0, 0);
                    producer.send(new ProducerRecord<>(
                            topic,
                            (int) (sent % 3),
                            now,
                            campaign.getBytes(StandardCharsets.UTF_8),
                            EventJson.toJson(e).getBytes(StandardCharsets.UTF_8)));
                }
                if (now - lastReport >= 10_000) {
                    // What it really offered, per 10 s: a producer that cannot keep up would look like a slow job.
                    System.out.printf(
                            Locale.ROOT,
                            "at %d s: %d events/s in the last %d ms, %d behind schedule%n",
                            (now - start) / 1000,
                            (sent - sentAtReport) * 1000 / (now - lastReport),
                            now - lastReport,
                            (System.currentTimeMillis() - start) * rate / 1000 - sent);
                    lastReport = now;
                    sentAtReport = sent;
                }
                Thread.sleep(1); // pacing the offered rate, not synchronisation
            }
        }
        System.out.printf(
                Locale.ROOT,
                "sent %d events in %d s = %.0f events/s%n",
                sent,
                seconds,
                sent / ((System.currentTimeMillis() - start) / 1000.0));
    }
}
