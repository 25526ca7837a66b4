package dev.recount.tools.demo;

import dev.recount.core.time.Wait;
import dev.recount.db.tables.Timestamps;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** The demo's own connections to the stack, from local.env's values: Kafka clients and the administrator's JDBC. */
final class DemoConnections {
    private DemoConnections() {}

    static Properties kafka(Map<String, String> env) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, env.get("KAFKA_BOOTSTRAP_SERVERS"));
        return p;
    }

    /** The administrator: only the demo's reset and its read-back use it; the steps log in as their own logins. */
    static Connection admin(Map<String, String> env) throws SQLException {
        return DriverManager.getConnection(env.get("RECOUNT_JDBC_URL"), env.get("PGUSER"), env.get("PGPASSWORD"));
    }

    /**
     * How many window keys in [from, to) {@code view} (a set's serving view, e.g. {@code window_metrics}) serves as
     * final (a reconciliation covered them).
     */
    static long finalWindowKeys(Map<String, String> env, String view, Instant from, Instant to) throws SQLException {
        try (Connection c = admin(env);
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + DemoWorkspace.SCHEMA + "." + view
                        + " WHERE is_final AND window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, from.toEpochMilli());
            Timestamps.bind(ps, 2, to.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Reads a whole topic (read_committed: what the job committed) and returns each record's value. */
    static List<byte[]> readTopic(Map<String, String> env, String topic) {
        Properties p = kafka(env);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition()))
                    .toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            List<byte[]> values = new ArrayList<>();
            // The poll itself waits up to 500 ms: no pause between checks.
            boolean read;
            try {
                read = Wait.upTo(Duration.ofMinutes(1)).every(Duration.ZERO).until(() -> {
                    if (parts.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp))) return true;
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500)))
                        values.add(r.value());
                    return false;
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted reading " + topic, e);
            }
            if (!read) throw new IllegalStateException("timed out reading " + topic);
            return values;
        }
    }
}
