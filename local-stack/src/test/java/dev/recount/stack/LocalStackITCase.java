package dev.recount.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.LocalEnvFile;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.stack.embedded.Ports;
import dev.recount.stack.embedded.ProcessProbe;
import dev.recount.stack.embedded.StackFiles;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.Poll;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local stack's whole life on real processes, started the way ./recount and testkit start it (local-stack's jar
 * and runtime classpath in a child JVM): up, produce and consume, migrations, status, up again, down, up on the same
 * data, and recovery after both services were killed with SIGKILL.
 */
class LocalStackITCase {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String INPUT = "ad-events";
    private static final String VALID = "{\"event_id\":\"it-1\",\"event_type\":\"click\",\"event_ts\":1795946400000,"
            + "\"campaign_id\":\"c-42\",\"channel_id\":\"web\",\"cost_micros\":1500}";
    private static final String INVALID = "this line is not JSON";

    @TempDir
    Path tmp;

    @Test
    void upProduceStatusDownUpAgainAndRecoverFromAKill() throws Exception {
        Path home = tmp.resolve("stack");
        step("up");
        LocalStack stack = LocalStack.start(home);
        try {
            // --- up: local.env, topics, migrations
            step("checks after up");
            Map<String, String> env = stack.environment();
            assertThat(env)
                    .containsKeys(
                            "KAFKA_BOOTSTRAP_SERVERS",
                            "PGHOST",
                            "PGPORT",
                            "PGDATABASE",
                            "PGUSER",
                            "PGPASSWORD",
                            "RECOUNT_JDBC_URL",
                            "RECOUNT_PGPASSWORD_DIR");
            assertThat(stack.bootstrapServers()).matches("127\\.0\\.0\\.1:\\d+");
            assertThat(stack.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:" + env.get("PGPORT") + "/recount");
            assertThat(env.get("PGDATABASE")).isEqualTo("recount");
            assertThat(stack.adminPassword()).hasSizeGreaterThanOrEqualTo(16);
            assertThat(sourcedByShell(home, "PGPASSWORD")).isEqualTo(stack.adminPassword());
            assertThat(sourcedByShell(home, "RECOUNT_JDBC_URL")).isEqualTo(stack.jdbcUrl());
            assertThat(partitions(stack))
                    .containsEntry(INPUT, 3)
                    .containsEntry("ad-events-dlq", 3)
                    .containsEntry("ad-events-late", 3);
            assertComponentLogins(stack, home);
            // Password authentication, not trust: a wrong password is refused.
            String jdbcUrl = stack.jdbcUrl();
            String adminUser = stack.adminUser();
            assertThatThrownBy(() -> DriverManager.getConnection(jdbcUrl, adminUser, "wrong")
                            .close())
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("password authentication failed");
            try (Connection c = stack.adminConnection();
                    Statement s = c.createStatement()) {
                assertThat(scalar(s, "SELECT count(*) FROM recount.flyway_schema_history WHERE success"))
                        .isGreaterThanOrEqualTo(6);
                assertThat(
                                scalar(
                                        s,
                                        "SELECT count(*) FROM pg_tables WHERE schemaname = 'recount' "
                                                + "AND tablename IN ('stream_window_metrics', 'batch_window_metrics', 'batch_runs')"))
                        .isEqualTo(3);
                s.execute("CREATE TABLE public.itcase_marker (note text)");
                s.execute("INSERT INTO public.itcase_marker VALUES ('written before the restart')");
            }

            // --- produce, then consume back: both records with their keys (the tools' `produce` has its own ITCase)
            step("produce, then consume back");
            produce(stack.bootstrapServers());
            assertRecordsAreThere(stack.bootstrapServers());

            // --- status: both services, pids, ports
            step("status");
            long kafkaPid = StackFiles.readPid(home.resolve("kafka/broker.pid")).orElseThrow();
            long postgresPid = StackFiles.readPid(home.resolve("postgres/data/postmaster.pid"))
                    .orElseThrow();
            CommandRun status = CommandRun.of("status", "--home", home.toString());
            assertThat(status.exitCode()).as(status.out()).isEqualTo(StatusCommand.ALL_UP);
            assertThat(status.out())
                    .contains(
                            "running, pid " + kafkaPid,
                            "running, pid " + postgresPid,
                            stack.bootstrapServers(),
                            stack.jdbcUrl());
            CommandRun statusJson = CommandRun.of("status", "--home", home.toString(), "--json");
            assertThat(statusJson.exitCode()).as(statusJson.err()).isEqualTo(StatusCommand.ALL_UP);
            JsonNode json = new ObjectMapper().readTree(statusJson.out());
            assertThat(statusJson.out().strip().lines())
                    .as("one JSON object, nothing else")
                    .hasSize(1);
            assertThat(json.get("state").asText()).isEqualTo("running");
            assertThat(json.get("bootstrap_servers").asText()).isEqualTo(stack.bootstrapServers());
            assertThat(json.get("jdbc_url").asText()).isEqualTo(stack.jdbcUrl());
            JsonNode kafka = json.get("services").get(0);
            assertThat(kafka.get("state").asText()).isEqualTo("running");
            assertThat(kafka.get("pid").asLong()).isEqualTo(kafkaPid);
            assertThat(kafka.get("answering").asBoolean()).isTrue();
            assertThat(kafka.get("address").asText()).isEqualTo(stack.bootstrapServers());
            assertThat(json.get("services").get(1).get("pid").asLong()).isEqualTo(postgresPid);

            // --- up again: harmless, says so, changes nothing
            step("up again");
            CommandRun upAgain = CommandRun.of("up", "--home", home.toString());
            assertThat(upAgain.exitCode()).as(upAgain.err()).isZero();
            assertThat(upAgain.out()).contains("already running");
            assertThat(StackFiles.readPid(home.resolve("kafka/broker.pid"))).hasValue(kafkaPid);
            assertThat(LocalEnvFile.read(LocalEnvFile.in(home))).isEqualTo(env);

            // --- down: processes gone, ports closed
            step("down");
            int kafkaPort = port(stack.bootstrapServers());
            int postgresPort = Integer.parseInt(env.get("PGPORT"));
            stack.stop();
            assertThat(ProcessProbe.isAlive(kafkaPid))
                    .as("Kafka broker process")
                    .isFalse();
            assertThat(ProcessProbe.isAlive(postgresPid))
                    .as("postmaster process")
                    .isFalse();
            assertThat(Ports.isOpen(kafkaPort)).as("Kafka port").isFalse();
            assertThat(Ports.isOpen(postgresPort)).as("PostgreSQL port").isFalse();
            CommandRun stopped = CommandRun.of("status", "--home", home.toString());
            assertThat(stopped.exitCode()).as(stopped.out()).isEqualTo(StatusCommand.NOTHING_RUNS);
            JsonNode stoppedJson = new ObjectMapper()
                    .readTree(CommandRun.of("status", "--home", home.toString(), "--json")
                            .out());
            assertThat(stoppedJson.get("state").asText()).isEqualTo("stopped");
            assertThat(stoppedJson.get("services").get(0).has("pid"))
                    .as("a stopped service has no pid")
                    .isFalse();

            // --- up on the same data: the row, the schema and the records are still there
            step("up on the same data");
            stack = LocalStack.start(home);
            assertDataSurvived(stack);

            // --- kill -9 both: status says so, and up recovers them with their data
            step("kill -9 both");
            long killedKafka =
                    StackFiles.readPid(home.resolve("kafka/broker.pid")).orElseThrow();
            long killedPostgres = StackFiles.readPid(home.resolve("postgres/data/postmaster.pid"))
                    .orElseThrow();
            ProcessHandle.of(killedKafka).orElseThrow().destroyForcibly();
            ProcessHandle.of(killedPostgres).orElseThrow().destroyForcibly();
            Poll.until(
                    WAIT,
                    "both services to die",
                    () -> !ProcessProbe.isAlive(killedKafka) && !ProcessProbe.isAlive(killedPostgres));
            CommandRun crashed = CommandRun.of("status", "--home", home.toString());
            assertThat(crashed.exitCode()).as(crashed.out()).isEqualTo(StatusCommand.NOTHING_RUNS);
            assertThat(crashed.out())
                    .contains(
                            "pid " + killedKafka + " of a previous run is gone",
                            "pid " + killedPostgres + " of a previous run is gone");
            stack = LocalStack.start(home);
            assertThat(Files.readString(home.resolve("launcher.log"))).contains("gone without a clean shutdown");
            assertDataSurvived(stack);
            step("final down");
        } finally {
            stopQuietly(stack);
        }
        step("stopped");
        assertThat(CommandRun.of("status", "--home", home.toString()).exitCode())
                .isEqualTo(StatusCommand.NOTHING_RUNS);
    }

    /**
     * up created a login per role for schema recount, each with its own password in an owner-only file under an
     * owner-only home; a login is no superuser and works with its role's privileges only.
     */
    private static void assertComponentLogins(LocalStack stack, Path home) throws Exception {
        assertThat(mode(home)).isEqualTo("rwx------");
        Path secrets = home.resolve("secrets");
        assertThat(stack.passwordDir()).isEqualTo(secrets);
        assertThat(mode(secrets)).isEqualTo("rwx------");
        Set<String> passwords = new HashSet<>();
        for (Role role : Role.values()) {
            String login = role.loginName("recount");
            Path file = secrets.resolve(login + ".password");
            assertThat(mode(file)).as(file.toString()).isEqualTo("rw-------");
            passwords.add(stack.password(login));
            try (Connection c = stack.loginConnection("recount", role);
                    Statement s = c.createStatement()) {
                assertThat(scalar(
                                s,
                                "SELECT count(*) FROM pg_roles WHERE rolname = current_user AND NOT rolsuper"
                                        + " AND NOT rolcreaterole AND NOT rolcreatedb"))
                        .as(login)
                        .isEqualTo(1);
                Database.checkLogin(c, "recount", role);
            }
        }
        assertThat(passwords)
                .as("one password per login, none the administrator's")
                .hasSize(Role.values().length)
                .doesNotContain(stack.adminPassword());
        try (Connection c = stack.loginConnection("recount", Role.STREAM);
                Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.execute("INSERT INTO batch_runs (mode, status) VALUES ('range', 'running')"))
                    .hasMessageContaining("permission denied for table batch_runs");
        }
    }

    private static String mode(Path p) throws java.io.IOException {
        return java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private final long started = System.nanoTime();

    /** Marks a step in the test output with the seconds since the start: where the time goes on a slow machine. */
    private void step(String name) {
        System.out.printf("[%5.1f s] %s%n", (System.nanoTime() - started) / 1e9, name);
    }

    private static void assertDataSurvived(LocalStack stack) throws Exception {
        try (Connection c = stack.adminConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT note FROM public.itcase_marker")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("written before the restart");
            assertThat(scalar(c.createStatement(), "SELECT count(*) FROM recount.flyway_schema_history WHERE success"))
                    .isGreaterThanOrEqualTo(6);
        }
        assertRecordsAreThere(stack.bootstrapServers());
    }

    /** Sends the two records as `produce` would: the valid one keyed by its campaign_id, the invalid one unkeyed. */
    private static void produce(String bootstrap) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                true,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class.getName()))) {
            producer.send(new ProducerRecord<>(
                            INPUT, "c-42".getBytes(StandardCharsets.UTF_8), VALID.getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(INPUT, null, INVALID.getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /** Reads the input topic from the beginning until both produced records are seen. */
    private static void assertRecordsAreThere(String bootstrap) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false))) {
            List<TopicPartition> parts = consumer.partitionsFor(INPUT, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition()))
                    .collect(Collectors.toList());
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
            Poll.until(WAIT, "the two produced records on " + INPUT, () -> {
                consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
                return seen.size() >= 2;
            });
            assertThat(seen).hasSize(2);
            ConsumerRecord<byte[], byte[]> valid = find(seen, VALID);
            ConsumerRecord<byte[], byte[]> invalid = find(seen, INVALID);
            assertThat(new String(valid.key(), StandardCharsets.UTF_8)).isEqualTo("c-42");
            assertThat(invalid.key()).isNull();
        }
    }

    private static ConsumerRecord<byte[], byte[]> find(List<ConsumerRecord<byte[], byte[]>> records, String value) {
        Optional<ConsumerRecord<byte[], byte[]>> r = records.stream()
                .filter(x -> new String(x.value(), StandardCharsets.UTF_8).equals(value))
                .findFirst();
        assertThat(r).as("record with value %s", value).isPresent();
        return r.get();
    }

    private static Map<String, Integer> partitions(LocalStack stack) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()))) {
            Map<String, TopicDescription> d = admin.describeTopics(List.of(INPUT, "ad-events-dlq", "ad-events-late"))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS);
            return d.values().stream()
                    .collect(Collectors.toMap(
                            TopicDescription::name, t -> t.partitions().size()));
        }
    }

    /** What a POSIX shell sees after {@code . local.env}: the file must be valid shell, not only parseable by us. */
    private static String sourcedByShell(Path home, String variable) throws Exception {
        Process p = new ProcessBuilder(
                        "sh",
                        "-c",
                        ". \"$1\" && printf '%s' \"$" + variable + "\"",
                        "sh",
                        home.resolve("local.env").toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        return out;
    }

    private static long scalar(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    private static int port(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }

    private static void stopQuietly(LocalStack stack) {
        try {
            stack.stop();
        } catch (RuntimeException e) {
            System.err.println("stopping the local stack failed: " + e.getMessage());
        }
    }
}
