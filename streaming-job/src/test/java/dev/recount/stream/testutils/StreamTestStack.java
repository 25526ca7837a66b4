package dev.recount.stream.testutils;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.stream.run.StreamSettings;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.TestNames;
import dev.recount.testkit.Topics;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What the streaming ITCases share: the embedded stack (one per JVM, from testkit), and per test a set of unique
 * topics, a fresh migrated schema with its component logins, and local lake and checkpoint directories, bound
 * together as {@link StreamSettings} exactly as `stream` would read them from a config file and the environment.
 * The job logs in as the schema's stream login; the tests read results as the administrator.
 */
public final class StreamTestStack {
    private static final long ALL_FROM =
            java.time.Instant.parse("1970-01-01T00:00:00Z").toEpochMilli();
    private static final long ALL_TO =
            java.time.Instant.parse("9999-01-01T00:00:00Z").toEpochMilli();

    private final LocalStack stack = LocalStack.shared();

    public LocalStack stack() {
        return stack;
    }

    /** A test's own outputs (schema, dead-letter and backfill topics, lake, checkpoints) over a given input topic. */
    public record Job(StreamSettings settings, Path home) {
        public String schema() {
            return settings.postgres().schema();
        }

        public Path lake() {
            return Path.of(settings.lakePath());
        }
    }

    public String createTopic(String prefix, int partitions) {
        return createTopic(prefix, partitions, Map.of());
    }

    /** @param configs topic-level settings, e.g. {@code message.timestamp.after.max.ms} */
    public String createTopic(String prefix, int partitions, Map<String, String> configs) {
        String topic = TestNames.unique(prefix);
        try (Admin admin = Admin.create(adminProps())) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create topic " + topic, e);
        }
        return topic;
    }

    /**
     * @param settings extra settings (window.size etc.), on top of recount's defaults
     */
    public Job newJob(String inputTopic, Path home, Map<String, String> settings) throws IOException {
        return newJob(inputTopic, home, settings, null);
    }

    /**
     * As above, computing the metric sets of {@code definitions} (a definitions file's text, written to {@code home}
     * and named by {@code metric-sets.file}; null: the built-in default set), whose tables the schema gets as
     * {@code migrate} creates them.
     */
    public Job newJob(String inputTopic, Path home, Map<String, String> settings, String definitions)
            throws IOException {
        Files.createDirectories(home);
        Map<String, String> withSets = new HashMap<>(settings);
        MetricSets sets = MetricSets.defaults();
        if (definitions != null) {
            Path file = home.resolve("metric-sets.yaml");
            Files.writeString(file, definitions, StandardCharsets.UTF_8);
            withSets.put(MetricSets.FILE_SETTING, file.toString());
            RecountConfig config = RecountConfig.defaults();
            for (Map.Entry<String, String> e : withSets.entrySet()) config = config.with(e.getKey(), e.getValue());
            sets = MetricSets.fromConfig(config);
        }
        settings = withSets;
        // Migrated, with its logins: the job logs in as the schema's stream login, never as the administrator.
        String schema = stack.createMigratedSchema("stream", sets);
        Map<String, String> values = new HashMap<>();
        values.put("topics.input", inputTopic);
        values.put("topics.dead-letter", createTopic("dlq", 1));
        values.put("topics.backfill", createTopic("late", 1));
        values.put("postgres.schema", schema);
        values.put("postgres.password-dir", stack.passwordDir().toString());
        values.put("postgres.pool-size", "2");
        values.put("lake.path", home.resolve("lake").toString());
        values.put("stream.checkpoint-dir", home.resolve("checkpoints").toString());
        values.put("stream.checkpoint-interval", "500ms");
        values.putAll(settings);
        Path file = home.resolve("recount.properties");
        Files.createDirectories(home);
        Properties p = new Properties();
        p.putAll(values);
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(w, null);
        }
        // What `./recount stream` sees after local.env, less the administrator's password (the launcher drops it).
        Map<String, String> env = Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", stack.bootstrapServers(),
                "RECOUNT_JDBC_URL", stack.jdbcUrl(),
                "PGUSER", stack.adminUser());
        return new Job(StreamSettings.from(RecountConfig.load(file, env)), home);
    }

    public KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.ACKS_CONFIG, "all");
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(p);
    }

    /** Every committed record of a topic (read_committed: what a downstream consumer of recount sees). */
    public List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic) {
        return Topics.readCommitted(stack.bootstrapServers(), topic, Duration.ofSeconds(30));
    }

    /** The default set's stream rows. */
    public List<StreamWindowMetricsTable.Row> windowRows(Job job) throws SQLException {
        return windowRows(job, dev.recount.stream.Fixtures.DEFAULT_SET);
    }

    /** The stream rows of {@code set}, from its own table. */
    public List<StreamWindowMetricsTable.Row> windowRows(Job job, dev.recount.core.sets.MetricSet set)
            throws SQLException {
        try (Connection c = connection(job)) {
            return new StreamWindowMetricsTable(new dev.recount.db.sets.SetTables(set)).readRange(c, ALL_FROM, ALL_TO);
        }
    }

    /** What the job recorded as archived into the lake, per hour start (lake_archived_rows). */
    public SortedMap<Long, Long> lakeArchivedRows(Job job) throws SQLException {
        try (Connection c = connection(job)) {
            return LakeArchivedRowsTable.rowsByHour(c, ALL_FROM, ALL_TO);
        }
    }

    public Optional<Long> lakeCompleteUntil(Job job) throws SQLException {
        try (Connection c = connection(job);
                PreparedStatement ps =
                        c.prepareStatement("SELECT lake_complete_until FROM stream_progress WHERE job_name = ?")) {
            ps.setString(1, StreamSettings.JOB_NAME);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rs.getTimestamp(1).getTime()) : Optional.empty();
            }
        }
    }

    private Connection connection(Job job) throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(job.schema());
        return c;
    }

    private Properties adminProps() {
        Properties p = new Properties();
        p.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        return p;
    }

    /** Sends one record to a given partition with a given record timestamp, waits for the ack, returns its offset. */
    public static long send(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            int partition,
            long recordTs,
            String key,
            byte[] value) {
        try {
            return producer.send(new ProducerRecord<>(
                            topic,
                            partition,
                            recordTs,
                            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                            value))
                    .get(30, TimeUnit.SECONDS)
                    .offset();
        } catch (Exception e) {
            throw new IllegalStateException("cannot send to " + topic + "-" + partition, e);
        }
    }
}
