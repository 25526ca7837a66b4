package dev.recount.tools.advise;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.TestNames;
import dev.recount.tools.ToolsMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code advise} against a real Kafka broker: it reads exactly the records whose timestamps fall in [from, to) on
 * every partition, skips invalid records and repeated ids, and reports what it read.
 */
class AdviseCommandITCase {
    static final Instant FROM = Instant.parse("2026-11-28T10:00:00Z");
    static final Instant TO = Instant.parse("2026-11-28T11:00:00Z");

    @Test
    void readsTheTimeRangeOfEveryPartitionAndAdvises() throws Exception {
        LocalStack stack = LocalStack.shared();
        String topic = TestNames.unique("advise");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()))) {
            // Old fixed timestamps: keep them whatever the date is when this runs.
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "-1"))))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        long from = FROM.toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int p = 0; p < 2; p++) {
                send(producer, topic, p, from - 60_000, event("before-" + p, from - 65_000)); // before the range
                for (int i = 0; i < 50; i++) {
                    long arrival = from + i * 60_000L;
                    send(producer, topic, p, arrival, event("in-" + p + "-" + i, arrival - 2_000 - i * 100L));
                    if (i == 10 && p == 0)
                        send(producer, topic, p, arrival + 1, "not json".getBytes(StandardCharsets.UTF_8));
                    if (i == 10 && p == 1)
                        send(producer, topic, p, arrival + 1, event("in-1-0", from - 2_000)); // repeated id
                    // A timestamp that steps back before `from` inside the offset range: skipped, and said so.
                    if (i == 20 && p == 0) send(producer, topic, p, from - 5_000, event("stale-0", from - 6_000));
                }
                send(producer, topic, p, TO.toEpochMilli() + 1_000, event("after-" + p, TO.toEpochMilli()));
            }
            producer.flush();
        }

        CommandLine cl = ToolsMain.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = cl.setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(
                        "advise",
                        "--from",
                        FROM.toString(),
                        "--to",
                        TO.toString(),
                        "--topic",
                        topic,
                        "--bootstrap-servers",
                        stack.bootstrapServers());

        assertThat(exit).as(err.toString()).isZero();
        // 2 × 50 in range, plus the invalid record and the repeated id; the records before and after are not read.
        assertThat(out.toString())
                .contains("102 records, 100 valid events, 1 invalid and 1 repeated event_ids skipped,"
                        + " 1 records in the offset range but outside the time range")
                .contains("watermark.out-of-orderness=")
                .contains("recommended");
        // Delays 2.0 s .. 6.9 s: p99 rounds up to 10 s.
        assertThat(out.toString()).contains("watermark.out-of-orderness=10s");

        // --json: the same facts, one object.
        StringWriter jsonOut = new StringWriter();
        int jsonExit = cl.setOut(new PrintWriter(jsonOut, true))
                .setErr(new PrintWriter(err, true))
                .execute(
                        "advise",
                        "--from",
                        FROM.toString(),
                        "--to",
                        TO.toString(),
                        "--topic",
                        topic,
                        "--bootstrap-servers",
                        stack.bootstrapServers(),
                        "--json");
        assertThat(jsonExit).as(err.toString()).isZero();
        assertThat(jsonOut.toString().strip().lines())
                .as("exactly one JSON object on stdout")
                .hasSize(1);
        JsonNode json = new ObjectMapper().readTree(jsonOut.toString());
        assertThat(json.get("topic").asText()).isEqualTo(topic);
        assertThat(json.get("records").asLong()).isEqualTo(102);
        assertThat(json.get("events").asLong()).isEqualTo(100);
        assertThat(json.get("invalid").asLong()).isEqualTo(1);
        assertThat(json.get("duplicates").asLong()).isEqualTo(1);
        assertThat(json.get("outside_range").asLong()).isEqualTo(1);
        assertThat(json.get("truncated").asBoolean()).isFalse();
        assertThat(json.get("partitions")).hasSize(2);
        JsonNode p0 = json.get("partitions").get(0);
        assertThat(p0.get("partition").asInt()).isZero();
        assertThat(p0.get("events").asLong()).isEqualTo(50);
        // Delays 2000 + i * 100 ms, i = 0..49: nearest-rank p50 = 4400, max 6900 (the histogram keeps 3 digits).
        assertThat(p0.get("delay_ms").get("p50").asLong()).isBetween(4_400L, 4_404L);
        assertThat(p0.get("delay_ms").get("max").asLong()).isEqualTo(6_900);
        // Events one minute apart.
        assertThat(p0.get("gap_ms").get("largest").get(0).asLong()).isEqualTo(60_000);
        JsonNode recommended = json.get("recommendation");
        assertThat(recommended.get("watermark.out-of-orderness").get("value").asText())
                .isEqualTo("10s");
        assertThat(recommended.get("watermark.out-of-orderness").get("ms").asLong())
                .isEqualTo(10_000);
        JsonNode first = json.get("candidates").get(0);
        assertThat(first.get("label").asText()).isEqualTo("current config");
        assertThat(first.get("on_time").asLong()
                        + first.get("late").asLong()
                        + first.get("too_late").asLong())
                .isEqualTo(100);
    }

    static void send(KafkaProducer<byte[], byte[]> producer, String topic, int partition, long ts, byte[] value)
            throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, ts, null, value)).get(30, TimeUnit.SECONDS);
    }

    static byte[] event(String id, long eventTs) {
        return ("{\"event_id\":\"" + id + "\",\"event_type\":\"impression\",\"event_ts\":" + eventTs
                        + ",\"campaign_id\":\"c-1\",\"channel_id\":\"web\",\"cost_micros\":1000}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
