package dev.recount.tools.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.testkit.LocalStack;
import dev.recount.testkit.TestNames;
import dev.recount.testkit.Topics;
import dev.recount.tools.CommandRun;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `produce` against a real broker: each line once, a rerun of the same file continues after the last committed
 * line (here: the whole file, so nothing is sent again), --from-earliest sends everything again, and --timestamp event
 * stamps records with their event_ts (with a warning under the default when the events are old).
 */
class ProduceITCase {
    private static final Instant OLD = Instant.parse("2026-11-01T10:00:00Z");
    private final LocalStack stack = LocalStack.shared();

    @Test
    void aRerunContinuesAfterTheLastCommittedLineAndFromStartSendsAgain(@TempDir Path dir) throws Exception {
        String topic = topic();
        Path file = file(dir, 30);

        CommandRun first = produce(file, topic);
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).contains("produced 30 records");
        CommandRun again = produce(file, topic);
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("lines 1-30", "already", "produced 0 records");
        assertThat(read(topic)).hasSize(30);

        CommandRun fromStart = produce(file, topic, "--from-earliest");
        assertThat(fromStart.out()).contains("produced 30 records");
        assertThat(read(topic)).hasSize(60);
    }

    @Test
    void oldEventsAreWarnedAboutUnderNowAndStampedWithTheirTimeUnderEvent(@TempDir Path dir) throws Exception {
        String topic = topic();
        Path file = file(dir, 3);

        CommandRun now = produce(file, topic);
        assertThat(now.out()).contains("warning: line 1 has event_ts " + OLD, "--timestamp event", "3 line(s)");
        CommandRun event = produce(file, topic, "--from-start", "--timestamp", "event"); // the old spelling still works
        assertThat(event.out()).doesNotContain("warning");
        List<ConsumerRecord<byte[], byte[]>> records = read(topic);
        assertThat(records.subList(3, 6))
                .extracting(ConsumerRecord::timestamp)
                .containsExactly(OLD.toEpochMilli(), OLD.toEpochMilli() + 1, OLD.toEpochMilli() + 2);
        assertThat(records.get(0).timestamp())
                .isGreaterThan(Instant.parse("2026-11-29T00:00:00Z").toEpochMilli());
    }

    private CommandRun produce(Path file, String topic, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "produce",
                "--file",
                file.toString(),
                "--topic",
                topic,
                "--bootstrap-servers",
                stack.bootstrapServers()));
        args.addAll(List.of(more));
        return CommandRun.of(args.toArray(String[]::new));
    }

    private static Path file(Path dir, int lines) throws Exception {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < lines; i++) {
            b.append("{\"event_id\":\"e")
                    .append(i)
                    .append("\",\"event_type\":\"click\",\"event_ts\":")
                    .append(OLD.toEpochMilli() + i)
                    .append(",\"campaign_id\":\"c")
                    .append(i % 3)
                    .append("\",\"channel_id\":\"web\",\"cost_micros\":5}\n");
        }
        return Files.writeString(dir.resolve("events-" + lines + ".jsonl"), b.toString(), StandardCharsets.UTF_8);
    }

    private String topic() throws Exception {
        String topic = TestNames.unique("produce");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        return topic;
    }

    private List<ConsumerRecord<byte[], byte[]>> read(String topic) {
        return Topics.readCommitted(stack.bootstrapServers(), topic, Duration.ofSeconds(30));
    }
}
