package dev.recount.tools.produce;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** How recount's own tools (produce, generate) send raw records: one producer setting, one pacing rule. */
public final class RecordProducers {
    private RecordProducers() {}

    /** An idempotent producer of raw byte records that waits for all replicas: no record lost or sent twice. */
    public static Map<String, Object> idempotentBytes(String bootstrap, String clientId) {
        return Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.CLIENT_ID_CONFIG,
                clientId,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class.getName(),
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                true,
                ProducerConfig.LINGER_MS_CONFIG,
                10,
                ProducerConfig.BATCH_SIZE_CONFIG,
                256 * 1024,
                // Fail within seconds, not a minute, when nothing listens at the bootstrap address.
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                (int) TimeUnit.SECONDS.toMillis(15),
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                (int) TimeUnit.SECONDS.toMillis(60));
    }

    /** Waits until record number {@code sent} (0-based) is due at {@code rate} records per second since {@code startNanos}. */
    public static void pace(long startNanos, long sent, double rate) {
        long due = startNanos + (long) (sent * 1e9 / rate);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait); // pacing to the requested rate, not synchronisation
        }
    }
}
