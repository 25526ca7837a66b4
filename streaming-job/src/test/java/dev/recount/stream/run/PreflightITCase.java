package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.ConfigException;
import dev.recount.stream.testutils.StreamTestStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-flight checks against a real broker and PostgreSQL: Kafka's side runs on its own thread while PostgreSQL's
 * runs on the caller's, and a start that fails either stops before anything is written (no run ledger, no job).
 */
class PreflightITCase {
    private final StreamTestStack stack = new StreamTestStack();

    @Test
    void aPassingCheckReadsTheInputOffsetsAndWhatWasCommitted(@TempDir Path home) throws Exception {
        String input = stack.createTopic("preflight", 2);
        try (KafkaProducer<byte[], byte[]> producer = stack.producer()) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(input, 1, null, "x".getBytes(StandardCharsets.UTF_8)))
                        .get();
            }
        }
        TopicPartition p0 = new TopicPartition(input, 0);
        TopicPartition p1 = new TopicPartition(input, 1);
        try (Admin admin = Admin.create(Map.<String, Object>of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers()))) {
            admin.deleteRecords(Map.of(p1, RecordsToDelete.beforeOffset(2)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        StreamTestStack.Job job = stack.newJob(input, home, Map.of());

        Preflight.Checked checked = Preflight.checkAndRead(job.settings());
        assertThat(checked.input().latest()).containsExactlyInAnyOrderEntriesOf(Map.of(p0, 0L, p1, 3L));
        assertThat(checked.input().earliest()).containsExactlyInAnyOrderEntriesOf(Map.of(p0, 0L, p1, 2L));
        assertThat(checked.input().group())
                .as("the job's group never committed")
                .isEmpty();
        assertThat(checked.committed())
                .as("a fresh schema: nothing committed yet")
                .isEmpty();
    }

    @Test
    void aMissingTopicStopsTheStartBeforeAnythingIsWritten(@TempDir Path home) throws Exception {
        StreamTestStack.Job job = stack.newJob(
                stack.createTopic("preflight", 1), home, Map.of("topics.backfill", "no-such-topic-preflight"));
        assertStartFails(job)
                .hasMessageContaining("has no topic no-such-topic-preflight")
                .hasMessageContaining("`./recount up` creates them");
        assertThat(Files.exists(home.resolve("checkpoints")))
                .as("no run ledger written")
                .isFalse();
    }

    @Test
    void aCompactedTopicStopsTheStart(@TempDir Path home) throws Exception {
        String backfill = stack.createTopic("late", 1);
        try (Admin admin = Admin.create(Map.<String, Object>of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers()))) {
            admin.incrementalAlterConfigs(Map.of(
                            new ConfigResource(ConfigResource.Type.TOPIC, backfill),
                            List.of(new AlterConfigOp(
                                    new ConfigEntry(TopicConfig.CLEANUP_POLICY_CONFIG, "compact,delete"),
                                    AlterConfigOp.OpType.SET))))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        StreamTestStack.Job job =
                stack.newJob(stack.createTopic("preflight", 1), home, Map.of("topics.backfill", backfill));
        assertStartFails(job)
                .hasMessageContaining("Kafka topic " + backfill + " (cleanup.policy=compact,delete) is compacted")
                .hasMessageContaining("cleanup.policy=delete");
        assertThat(Files.exists(home.resolve("checkpoints"))).isFalse();
    }

    @Test
    void aFailedLoginStopsTheStartBeforeAnythingIsWritten(@TempDir Path home, @TempDir Path secrets) throws Exception {
        Path wrong = Files.writeString(secrets.resolve("wrong.password"), "not-the-password\n");
        StreamTestStack.Job job = stack.newJob(
                stack.createTopic("preflight", 1), home, Map.of("postgres.stream.password-file", wrong.toString()));
        assertStartFails(job)
                .hasMessageContaining("cannot log in to PostgreSQL")
                .hasMessageContaining("password from");
        assertThat(Files.exists(home.resolve("checkpoints"))).isFalse();
    }

    @Test
    void whenBothSidesFailKafkasFailureIsReportedAsBefore(@TempDir Path home) throws Exception {
        String input = stack.createTopic("preflight", 1);
        StreamTestStack.Job postgresFails =
                stack.newJob(input, home.resolve("a"), Map.of("postgres.schema", "no_such_schema_preflight"));
        assertThatThrownBy(() -> Preflight.checkAndRead(postgresFails.settings()))
                .as("PostgreSQL's side fails alone")
                .hasMessageContaining("no_such_schema_preflight")
                .hasMessageNotContaining("has no topic");

        StreamTestStack.Job bothFail = stack.newJob(
                input,
                home.resolve("b"),
                Map.of("topics.dead-letter", "no-such-topic-preflight", "postgres.schema", "no_such_schema_preflight"));
        assertThatThrownBy(() -> Preflight.checkAndRead(bothFail.settings()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no topic no-such-topic-preflight");
    }

    /** Starting {@code job} fails before any Flink environment is created. */
    /**
     * A run of another window.size on a schema that holds the stream's rows would add windows overlapping the old ones
     * (counted twice in window_metrics); with stream.restore=cluster no checkpoint comparison stands in the way.
     */
    @Test
    void rowsOfAnotherWindowSizeStopTheStart(@TempDir Path home) throws Exception {
        StreamTestStack.Job job = stack.newJob(stack.createTopic("preflight", 1), home, Map.of("window.size", "5m"));
        try (Connection c = stack.stack().adminConnection();
                Statement st = c.createStatement()) {
            c.setSchema(job.schema());
            st.execute("INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, revision) VALUES"
                    + " ('2026-11-28 10:00Z', '2026-11-28 10:05Z', 'c', 'web', 1, 0, 0, 0, 1, 1),"
                    + " ('2026-11-28 11:00Z', '2026-11-28 11:01Z', 'c', 'web', 1, 0, 0, 0, 1, 1)");
            assertStartFails(job)
                    .hasMessageContaining("stream_window_metrics holds windows of 1m, not 5m")
                    .hasMessageContaining("a fresh schema");
            assertThat(Files.exists(home.resolve("checkpoints"))).isFalse();

            st.execute("DELETE FROM stream_window_metrics WHERE window_start = '2026-11-28 11:00Z'");
            Preflight.checkAndRead(job.settings()); // the same size: no objection
        }
    }

    /**
     * Every metric set's table is checked: rows of another window size in a set's own table stop the start, naming
     * the set, and so does a set whose tables `migrate` has not created.
     */
    @Test
    void everySetsTableIsCheckedForItsWindowSizeAndExistence(@TempDir Path home) throws Exception {
        String definitions = """
                version: 1
                sets:
                  - name: default
                  - name: by_channel
                    dimensions: [channel_id]
                    measures: [{name: clicks, kind: count, where: {event_type: click}}]
                    window: 5m
                """;
        StreamTestStack.Job job = stack.newJob(stack.createTopic("preflight", 1), home, Map.of(), definitions);
        Preflight.checkAndRead(job.settings()); // its tables, empty: no objection
        try (Connection c = stack.stack().adminConnection();
                Statement st = c.createStatement()) {
            c.setSchema(job.schema());
            st.execute("INSERT INTO by_channel__stream_window_metrics (window_start, window_end, channel_id, clicks,"
                    + " events, revision) VALUES ('2026-11-28 10:00Z', '2026-11-28 10:01Z', 'web', 1, 1, 1)");
            assertStartFails(job)
                    .hasMessageContaining("by_channel__stream_window_metrics holds windows of 1m, not 5m")
                    .hasMessageContaining("metric set by_channel");

            st.execute("DROP TABLE by_channel__stream_window_metrics CASCADE");
            assertStartFails(job)
                    .hasMessageContaining("has no by_channel__stream_window_metrics table")
                    .hasMessageContaining("`./recount migrate`");

            st.execute("DELETE FROM metric_sets WHERE name = 'by_channel'"); // as if migrate never ran for it
            // db's registry judges first: a definitions problem, as a bad file is (exit 2).
            assertThatThrownBy(() -> Preflight.checkAndRead(job.settings()))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("metric set by_channel")
                    .hasMessageContaining("run ./recount migrate");
            assertThat(Files.exists(home.resolve("checkpoints"))).isFalse();
        }
    }

    /** The broker would refuse the producers only at the first dead letter or too-late event, hours into a run. */
    @Test
    void aKafkaTransactionTimeoutAboveTheBrokersStopsTheStart(@TempDir Path home) throws Exception {
        StreamTestStack.Job job = stack.newJob(
                stack.createTopic("preflight", 1), home, Map.of("stream.kafka-transaction-timeout", "16m"));
        assertStartFails(job)
                .hasMessageContaining(
                        "stream.kafka-transaction-timeout 16m exceeds the broker's transaction.max.timeout.ms (900000 ms)");
        assertThat(Files.exists(home.resolve("checkpoints"))).isFalse();
    }

    /**
     * The warning reads the broker's own description of each topic: Kafka 4's default (an hour ahead at most) and
     * the broker's clock (LogAppendTime) are quiet; a topic that takes any future timestamp is named.
     */
    @Test
    void anInputTopicTakingAnyFutureTimestampIsWarnedAbout() throws Exception {
        String anyFuture = stack.createTopic(
                "preflight",
                1,
                Map.of(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE)));
        String twoHours =
                stack.createTopic("preflight", 1, Map.of(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, "7200000"));
        String brokersDefault = stack.createTopic("preflight", 1);
        String brokersClock = stack.createTopic(
                "preflight",
                1,
                Map.of(
                        TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG,
                        "LogAppendTime",
                        TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG,
                        String.valueOf(Long.MAX_VALUE)));
        try (Admin admin = Admin.create(Map.<String, Object>of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers()))) {
            Map<ConfigResource, Config> configs = admin.describeConfigs(
                            List.of(anyFuture, twoHours, brokersDefault, brokersClock).stream()
                                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
                                    .toList())
                    .all()
                    .get(30, TimeUnit.SECONDS);
            assertThat(warning(configs, anyFuture))
                    .hasValueSatisfying(w -> assertThat(w)
                            .startsWith("Kafka topic " + anyFuture + " takes record timestamps that producers set"
                                    + " (message.timestamp.type=CreateTime) any time ahead of the broker's clock")
                            .contains("set message.timestamp.after.max.ms to at most 3600000"));
            assertThat(warning(configs, twoHours))
                    .hasValueSatisfying(w -> assertThat(w).contains("up to 2h ahead of the broker's clock"));
            assertThat(warning(configs, brokersDefault)).isEmpty();
            assertThat(warning(configs, brokersClock)).isEmpty();
        }
    }

    private static java.util.Optional<String> warning(Map<ConfigResource, Config> configs, String topic) {
        return Preflight.futureTimestampsAccepted(
                topic, configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic)));
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertStartFails(StreamTestStack.Job job) {
        return assertThatThrownBy(() -> StreamRun.start(
                        job.settings(),
                        true,
                        true,
                        conf -> {
                            throw new AssertionError("no environment may be created");
                        },
                        line -> {}))
                .isInstanceOf(IllegalStateException.class);
    }
}
