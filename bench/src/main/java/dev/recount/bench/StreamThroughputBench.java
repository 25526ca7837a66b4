package dev.recount.bench;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.stream.run.RunningJob;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.run.StreamSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Throughput of the streaming job as shipped (validation, de-duplication, windows, late routing, lake, PostgreSQL),
 * in bounded mode: preloads N events into a fresh topic, then times the bounded job from submission until it has
 * finished (every window flushed and committed). Not a test; see streaming-job/README.md.
 *
 * <p>Connection settings come from the environment, as {@code . .recount/local.env} exports them. It works in its
 * own topics, PostgreSQL schema and temporary directories, and removes them afterwards.
 */
@Command(
        name = "stream-throughput-bench",
        mixinStandardHelpOptions = true,
        description = "Preload N events into Kafka and report events/s of the bounded streaming job.")
public final class StreamThroughputBench implements Callable<Integer> {
    private static final Instant START = Instant.parse("2026-11-29T00:00:00Z");

    @Option(names = "--events", description = "Events to preload (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    long events;

    @Option(names = "--partitions", description = "Input partitions (default ${DEFAULT-VALUE}).", defaultValue = "3")
    int partitions;

    @Option(names = "--parallelism", description = "Job parallelism (default ${DEFAULT-VALUE}).", defaultValue = "2")
    int parallelism;

    @Option(
            names = "--checkpoint-interval",
            description = "Checkpoint interval (default: as shipped, stream.checkpoint-interval).")
    String checkpointInterval;

    @Option(
            names = "--keys",
            description = "campaign x channel keys per window (default ${DEFAULT-VALUE}).",
            defaultValue = "1000")
    int keys;

    @Option(
            names = "--attribution",
            description = "Run the job with attribution.enabled=true (the events carry request"
                    + " ids either way, so runs with and without compare the same input).")
    boolean attribution;

    public static void main(String[] args) {
        System.exit(new CommandLine(new StreamThroughputBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        RecountConfig base = RecountConfig.fromEnvironment(null);
        String bootstrap = base.get("kafka.bootstrap-servers");
        String run = "bench-" + Long.toString(System.nanoTime() & 0xffffffL, 36);
        String schema = run.replace('-', '_');
        Path home = Files.createTempDirectory("recount-" + run);
        String input = run + "-input";
        List<String> topics = List.of(input, run + "-dlq", run + "-late");

        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(
                            new NewTopic(input, partitions, (short) 1),
                            new NewTopic(run + "-dlq", 1, (short) 1),
                            new NewTopic(run + "-late", 1, (short) 1)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
            try (Connection c = admin(base);
                    Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            Migrations.apply(
                    base.adminPostgres().jdbcUrl(), base.adminPostgres().user(), base.adminPassword(), schema);
            // The job logs in as the schema's stream login, as `./recount stream` does.
            try (Connection c = admin(base)) {
                Logins.ensureLocal(c, schema, home.resolve("secrets"));
            }

            long t0 = System.nanoTime();
            preload(bootstrap, input);
            double loadSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf(
                    "preloaded %,d events into %s (%d partitions) in %.1f s%n", events, input, partitions, loadSeconds);

            RecountConfig config = base.with("topics.input", input)
                    .with("topics.dead-letter", run + "-dlq")
                    .with("topics.backfill", run + "-late")
                    .with("postgres.schema", schema)
                    .with("postgres.password-dir", home.resolve("secrets").toString())
                    .with("stream.parallelism", Integer.toString(parallelism))
                    .with("stream.checkpoint-dir", home.resolve("checkpoints").toString())
                    .with("lake.path", home.resolve("lake").toString())
                    .with("stream.checkpoint-interval", checkpointInterval)
                    .with("attribution.enabled", Boolean.toString(attribution));
            StreamSettings settings = StreamSettings.from(config);

            long start = System.nanoTime();
            RunningJob job = StreamRun.start(
                    settings, true, true, StreamExecutionEnvironment::getExecutionEnvironment, line -> {});
            job.awaitEnd();
            double seconds = (System.nanoTime() - start) / 1e9;
            long rows;
            try (Connection c = admin(base);
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(
                            "SELECT count(*), coalesce(sum(events), 0) FROM " + schema + ".stream_window_metrics")) {
                rs.next();
                rows = rs.getLong(1);
                System.out.printf("stream_window_metrics: %,d rows, %,d events counted%n", rows, rs.getLong(2));
            }
            if (attribution) {
                try (Connection c = admin(base);
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT count(*), coalesce(sum(attributed_clicks), 0),"
                                + " coalesce(sum(unattributed_clicks), 0) FROM " + schema
                                + ".stream_attribution_metrics")) {
                    rs.next();
                    System.out.printf(
                            "stream_attribution_metrics: %,d rows, %,d attributed and %,d unattributed clicks%n",
                            rs.getLong(1), rs.getLong(2), rs.getLong(3));
                }
            }
            System.out.printf(
                    "bounded job, parallelism %d, checkpoint interval %s, attribution %s: %,d events in %.1f s"
                            + " = %,.0f events/s (submit to finish: includes job start-up and the final checkpoint)%n",
                    parallelism,
                    settings.checkpointInterval(),
                    attribution ? "on" : "off",
                    events,
                    seconds,
                    events / seconds);
            return 0;
        } finally {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("could not delete the bench topics: " + e.getMessage());
            }
            try (Connection c = admin(base);
                    Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            } catch (Exception e) {
                System.err.println("could not drop schema " + schema + ": " + e.getMessage());
            }
            deleteRecursively(home);
        }
    }

    private static Connection admin(RecountConfig config) throws java.sql.SQLException {
        return DriverManager.getConnection(
                config.adminPostgres().jdbcUrl(), config.adminPostgres().user(), config.adminPassword());
    }

    /**
     * Ad traffic with {@code keys} campaign/channel pairs, a type mix of 90/8/2 % and event time moving at 1,000
     * events per second per partition with up to 2 s of disorder; 1 % are re-sent duplicates, 0.5 % invalid. Every
     * event carries a request id: an impression its own, a click or conversion that of an event a few hundred
     * positions earlier (an impression most of the time, so most clicks are attributed).
     */
    private void preload(String bootstrap, String topic) throws Exception {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.setProperty(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 * 1024));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.setProperty(ProducerConfig.ACKS_CONFIG, "1");
        long base = START.toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long i = 0; i < events; i++) {
                int partition = (int) (i % partitions);
                long position = i / partitions;
                long ts = base + position + (position * 7919) % 2000;
                int key = (int) ((i * 2654435761L) % keys);
                String campaign = "camp-" + key / 4;
                EventType type =
                        i % 50 == 0 ? EventType.CONVERSION : i % 12 == 0 ? EventType.CLICK : EventType.IMPRESSION;
                long cost = type == EventType.IMPRESSION ? 1_500 : type == EventType.CLICK ? 250_000 : 4_000_000;
                String id = i % 100 == 99 ? "ev-" + (i - 1) : "ev-" + i; // a duplicate of the previous event id
                byte[] value = i % 200 == 7
                        ? "{\"event_id\": 42}".getBytes(StandardCharsets.UTF_8)
                        : EventJson.toJson(new AdEvent(
                                        id,
                                        type,
                                        ts,
                                        campaign,
                                        "ch-" + key % 4,
                                        cost,
                                        type == EventType.IMPRESSION
                                                ? "req-" + i
                                                : "req-" + Math.max(0, i - 1 - (i * 31) % 500),
                                        null,
                                        0,
                                        0,
                                        0))
                                .getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(
                        topic, partition, ts + 500, campaign.getBytes(StandardCharsets.UTF_8), value));
            }
            producer.flush();
        }
    }

    private static void deleteRecursively(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        } catch (Exception e) {
            System.err.println("could not delete " + dir + ": " + e.getMessage());
        }
    }
}
