package dev.recount.deploy.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.Durations;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.deploy.RecountLocal;
import dev.recount.deploy.local.LocalEnvFile;
import dev.recount.deploy.local.StackLayout;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The steps of {@code ./recount demo}, in order, each printing one progress line. Everything the demo creates
 * lives in its own workspace (topics {@code demo-ad-events*}, schema {@code demo}, {@code <home>/demo/}), reset at
 * the start of every run, so a demo never mixes with earlier runs or with the user's own data.
 */
final class DemoRun {
    static final String SCHEMA = "demo";
    /** The demo's attribution window: shorter than its few minutes of traffic, so some clicks fall beyond it. */
    static final String DEMO_ATTRIBUTION_WINDOW = "2m";
    static final String INPUT = "demo-ad-events";
    static final String DEAD_LETTER = "demo-ad-events-dlq";
    static final String BACKFILL = "demo-ad-events-late";
    static final int PARTITIONS = 3;
    private static final int STEPS = 7;
    private static final Duration STREAM_START_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration CLOSE_TIMEOUT = Duration.ofMinutes(4);

    record Options(Path home, long events, String span, double rate, long seed, String start, String idleness,
                   boolean keep, Path config) {}

    private final Options o;
    private final PrintWriter out;
    private final Path launcher;
    private int step;

    DemoRun(Options o, PrintWriter out) {
        this.o = o;
        this.out = out;
        String root = System.getenv("RECOUNT_ROOT");
        if (root == null || root.isBlank()) {
            throw new IllegalArgumentException("run the demo through the launcher: ./recount demo");
        }
        this.launcher = Path.of(root, "recount");
    }

    int run() throws Exception {
        RecountConfig base = RecountConfig.fromEnvironment(o.config());
        StackLayout layout = new StackLayout((o.home() != null ? o.home() : Path.of(base.get("local.home"))).toAbsolutePath());
        Path work = layout.home().resolve("demo");
        Duration span = Durations.parse(o.span());

        progress("starting the local stack (Kafka + PostgreSQL) in " + layout.home());
        boolean startedStack = upStack(layout, base);
        Map<String, String> env = LocalEnvFile.read(layout.envFile());

        progress("resetting the demo workspace: topics " + INPUT + "*, schema " + SCHEMA + ", " + work);
        Path configFile = writeDemoConfig(work, layout, env);
        RecountConfig cfg = RecountConfig.load(configFile, env);
        EventTimeSettings time = cfg.eventTime();
        resetWorkspace(env, work, layout);

        Duration tail = time.windowSize().plus(time.outOfOrderness()).plus(time.allowedLateness()).plusSeconds(30);
        Instant start = o.start() != null ? Instants.parseInstant(o.start())
                : Instant.now().truncatedTo(ChronoUnit.MINUTES).minus(span).minus(tail).truncatedTo(ChronoUnit.MINUTES);
        Instant mainEnd = start.plus(span);

        progress("starting the streaming job (log: " + work.resolve("logs/stream.log") + ")");
        ChildProcess stream = ChildProcess.start(launcher, env, work.resolve("logs/stream.log"),
                "stream", "--config", configFile.toString(), "--from-earliest");
        String webUi = "(not reported)";
        boolean streamKept = false;
        try {
            webUi = awaitStreamRunning(stream);
            out.println("      Flink Web UI: " + webUi);

            progress("generating " + o.events() + " events over " + Durations.format(span) + " of event time from " + start
                    + " at " + (long) o.rate() + " records/s, with late, duplicate and invalid records");
            Path truthDir = work.resolve("truth");
            StringWriter genOut = new StringWriter();
            int gen = RecountLocal.commandLine().setOut(new PrintWriter(genOut)).setErr(new PrintWriter(genOut))
                    .execute("generate", "--events", Long.toString(o.events()), "--span", o.span(), "--tail", Durations.format(tail),
                            "--start", start.toString(), "--seed", Long.toString(o.seed()), "--rate", Double.toString(o.rate()),
                            "--config", configFile.toString(), "--truth-dir", truthDir.toString());
            if (gen != 0) throw new IllegalStateException("generate failed: " + genOut.toString().trim());
            JsonNode truth = new ObjectMapper().readTree(truthDir.resolve("summary.json").toFile());

            progress("waiting until the watermark passes " + mainEnd.plus(time.allowedLateness())
                    + " (last window end + allowed lateness) and the job has read every record");
            awaitWindowsClosed(stream, env, cfg, mainEnd.plus(time.allowedLateness()));
            if (o.keep()) {
                streamKept = true;
            } else {
                stream.stop(Duration.ofSeconds(90));
            }

            progress("backfill range [" + start + ", " + mainEnd + ") from the lake (log: " + work.resolve("logs/backfill.log") + ")");
            int backfill = ChildProcess.start(launcher, env, work.resolve("logs/backfill.log"),
                    "backfill", "range", "--from", start.toString(), "--to", mainEnd.toString(), "--config", configFile.toString())
                    .await(Duration.ofMinutes(5));
            if (backfill != 0) throw new IllegalStateException("backfill exited " + backfill + "; see " + work.resolve("logs/backfill.log"));

            progress("reconcile [" + start + ", " + mainEnd + ") (log: " + work.resolve("logs/reconcile.log") + ")");
            Path reports = work.resolve("reports");
            ChildProcess reconcileProcess = ChildProcess.start(launcher, env, work.resolve("logs/reconcile.log"),
                    "reconcile", "--from", start.toString(), "--to", mainEnd.toString(), "--config", configFile.toString(),
                    "--report-dir", reports.toString());
            int reconcile = reconcileProcess.await(Duration.ofMinutes(3));
            if (reconcile != 0 && reconcile != ReconcileExit.BEYOND_TOLERANCE) {
                throw new IllegalStateException("reconcile exited " + reconcile + "; see " + reconcileProcess.log());
            }

            DemoSummary summary = DemoSummary.collect(env, cfg, start, mainEnd, truth);
            summary.print(out, reconcile == 0 ? "within tolerance" : "beyond tolerance (the stream missed too-late events; the batch values are now served)",
                    newestReport(reports), webUi, streamKept, lookYourself(layout, !o.keep() && startedStack));
        } finally {
            if (!streamKept) stream.stop(Duration.ofSeconds(90));
        }
        if (o.keep()) {
            out.println("The stack keeps running (--keep). Stop it with: ./recount down" + homeFlag(layout)
                    + (streamKept ? "; stop the streaming job first with: kill " + stream.pid()
                            + " (a clean stop: it takes a savepoint)" : ""));
        } else if (startedStack) {
            RecountLocal.commandLine().setOut(new PrintWriter(new StringWriter())).execute("down", "--home", layout.home().toString());
            out.println("Stopped the local stack this demo started (use --keep to leave it running).");
        } else {
            out.println("The local stack was already running and stays up. Stop it with: ./recount down" + homeFlag(layout));
        }
        out.flush();
        return 0;
    }

    private void progress(String line) {
        out.printf("[%d/%d] %s%n", ++step, STEPS, line);
        out.flush();
    }

    /**
     * How to look at the served rows yourself, as a line that works when pasted: the stack's local.env by its absolute
     * path; when the demo stops the stack it started, bringing it up again first (its data stays in the home).
     */
    static String lookYourself(StackLayout layout, boolean stackStopped) {
        String query = ". " + layout.envFile().toAbsolutePath() + " && psql -c 'SELECT * FROM " + SCHEMA
                + ".window_metrics LIMIT 10'";
        return stackStopped ? "./recount up" + homeFlag(layout) + " && " + query : query;
    }

    private static String homeFlag(StackLayout layout) {
        return layout.home().equals(Path.of(".recount").toAbsolutePath()) ? "" : " --home " + layout.home();
    }

    /** @return true when this call started the stack (so the demo stops it again afterwards) */
    private boolean upStack(StackLayout layout, RecountConfig base) {
        StringWriter buf = new StringWriter();
        int rc = RecountLocal.commandLine().setOut(new PrintWriter(buf)).setErr(new PrintWriter(buf))
                .execute("up", "--home", layout.home().toString());
        if (rc != 0) throw new IllegalStateException("`recount up` failed: " + buf.toString().trim());
        return !buf.toString().contains("already running");
    }

    private Path writeDemoConfig(Path work, StackLayout layout, Map<String, String> env) throws IOException {
        Files.createDirectories(work);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("local.home", layout.home().toString());
        // The stack's addresses, so in-process steps see them too (children also get local.env's environment).
        settings.put("kafka.bootstrap-servers", env.get("KAFKA_BOOTSTRAP_SERVERS"));
        settings.put("postgres.jdbc-url", env.get("RECOUNT_JDBC_URL"));
        settings.put("postgres.password-dir", layout.passwordDir().toString());
        settings.put("topics.input", INPUT);
        settings.put("topics.dead-letter", DEAD_LETTER);
        settings.put("topics.backfill", BACKFILL);
        settings.put("topics.input-partitions", Integer.toString(PARTITIONS));
        settings.put("lake.path", work.resolve("lake").toString());
        settings.put("stream.checkpoint-dir", work.resolve("checkpoints").toString());
        // Short checkpoints: rows become visible at each checkpoint, and the demo should not wait long for them.
        settings.put("stream.checkpoint-interval", "2s");
        settings.put("stream.web-ui-port", "0");
        settings.put("watermark.idleness", o.idleness());
        settings.put("postgres.schema", SCHEMA);
        settings.put("reconcile.report-dir", work.resolve("reports").toString());
        // Attribution on, with a window shorter than the run, so some clicks fall beyond it (the generator's delays
        // are heavy-tailed): the summary and the report then show attributed and unattributed clicks.
        settings.put("attribution.enabled", "true");
        settings.put("attribution.window", DEMO_ATTRIBUTION_WINDOW);
        StringBuilder file = new StringBuilder("# Written by `./recount demo` for its own workspace; rewritten every run.\n");
        settings.forEach((k, v) -> file.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        Path configFile = work.resolve("demo.properties");
        Files.writeString(configFile, file.toString(), StandardCharsets.UTF_8);
        return configFile;
    }

    private void resetWorkspace(Map<String, String> env, Path work, StackLayout layout) throws Exception {
        for (String dir : List.of("lake", "checkpoints", "reports", "truth", "logs")) deleteTree(work.resolve(dir));
        try (Admin admin = Admin.create(kafka(env))) {
            List<String> topics = List.of(INPUT, DEAD_LETTER, BACKFILL);
            var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<String> old = topics.stream().filter(existing::contains).toList();
            if (!old.isEmpty()) {
                admin.deleteTopics(old).all().get(30, TimeUnit.SECONDS);
                awaitCondition(Duration.ofSeconds(60), "old demo topics to be deleted",
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS).stream().noneMatch(old::contains));
            }
            admin.createTopics(topics.stream().map(t -> new NewTopic(t, PARTITIONS, (short) 1)).toList())
                    .all().get(30, TimeUnit.SECONDS);
            List<String> groups = admin.listGroups().all().get(30, TimeUnit.SECONDS).stream()
                    .map(GroupListing::groupId).filter(g -> g.startsWith("demo")).toList();
            if (!groups.isEmpty()) admin.deleteConsumerGroups(groups).all().get(30, TimeUnit.SECONDS);
        }
        try (Connection c = admin(env); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
        Migrations.apply(env.get("RECOUNT_JDBC_URL"), env.get("PGUSER"), env.get("PGPASSWORD"), SCHEMA);
        try (Connection c = admin(env)) {
            Logins.ensureLocal(c, SCHEMA, layout.passwordDir());
        }
    }

    private static final Pattern URL = Pattern.compile("(https?://[^\\s\"']+)");

    private String awaitStreamRunning(ChildProcess stream) throws Exception {
        String url = awaitValue(STREAM_START_TIMEOUT, "the streaming job to report its Web UI", () -> {
            requireAlive(stream);
            for (String line : stream.logText().split("\\R")) {
                if (line.contains("Web UI") || line.contains("web UI") || line.contains("Web-UI")) {
                    Matcher m = URL.matcher(line);
                    if (m.find()) return Optional.of(m.group(1).replaceAll("/+$", ""));
                }
            }
            return Optional.empty();
        });
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        awaitCondition(STREAM_START_TIMEOUT, "the streaming job to be RUNNING", () -> {
            requireAlive(stream);
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + "/jobs/overview")).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 && r.body().contains("\"RUNNING\"");
        });
        return url;
    }

    /**
     * Every main-range window is final once a committed checkpoint's watermark is past its end plus the allowed
     * lateness (stream_progress), and every record has been read (the job's committed offsets reach the end).
     */
    private void awaitWindowsClosed(ChildProcess stream, Map<String, String> env, RecountConfig cfg, Instant until)
            throws Exception {
        try (Admin admin = Admin.create(kafka(env))) {
            awaitCondition(CLOSE_TIMEOUT, "the watermark to pass " + until + " and the input to be fully read", () -> {
                requireAlive(stream);
                Optional<Long> complete;
                try (Connection c = admin(env); Statement s = c.createStatement()) {
                    s.execute("SET search_path TO " + SCHEMA);
                    complete = StreamProgressTable.lakeCompleteUntil(c);
                }
                return complete.isPresent() && complete.get() >= until.toEpochMilli() && inputFullyCommitted(admin);
            });
        }
    }

    private static boolean inputFullyCommitted(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) latest.put(new TopicPartition(INPUT, p), OffsetSpec.latest());
        var ends = admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
        for (GroupListing g : admin.listGroups().all().get(10, TimeUnit.SECONDS)) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(g.groupId()).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            if (committed.keySet().stream().noneMatch(tp -> tp.topic().equals(INPUT))) continue;
            boolean caughtUp = ends.entrySet().stream().allMatch(e -> {
                OffsetAndMetadata c = committed.get(e.getKey());
                return e.getValue().offset() == 0 || (c != null && c.offset() >= e.getValue().offset());
            });
            if (caughtUp) return true;
        }
        return false;
    }

    private static Path newestReport(Path reports) throws IOException {
        if (!Files.isDirectory(reports)) return reports;
        try (var dirs = Files.list(reports)) {
            return dirs.filter(Files::isDirectory)
                    .max((a, b) -> Long.compare(a.toFile().lastModified(), b.toFile().lastModified()))
                    .map(d -> d.resolve("report.html")).orElse(reports);
        }
    }

    private static void requireAlive(ChildProcess p) {
        if (!p.isAlive()) {
            String text = p.logText();
            String tail = text.lines().skip(Math.max(0, text.lines().count() - 15)).collect(Collectors.joining("\n"));
            throw new IllegalStateException("the streaming job stopped unexpectedly; see " + p.log() + "\n" + tail);
        }
    }

    static Properties kafka(Map<String, String> env) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, env.get("KAFKA_BOOTSTRAP_SERVERS"));
        return p;
    }

    static Connection admin(Map<String, String> env) throws SQLException {
        return DriverManager.getConnection(env.get("RECOUNT_JDBC_URL"), env.get("PGUSER"), env.get("PGPASSWORD"));
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
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            List<byte[]> values = new java.util.ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) throw new IllegalStateException("timed out reading " + topic);
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) values.add(r.value());
            }
            return values;
        }
    }

    interface Check {
        boolean holds() throws Exception;
    }

    interface Probe<T> {
        Optional<T> get() throws Exception;
    }

    static void awaitCondition(Duration timeout, String what, Check check) throws Exception {
        awaitValue(timeout, what, () -> check.holds() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /** Polls with a deadline and a growing pause; errors that say the process died end the wait at once. */
    static <T> T awaitValue(Duration timeout, String what, Probe<T> probe) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 50;
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                Optional<T> v = probe.get();
                if (v.isPresent()) return v.get();
            } catch (IllegalStateException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pause));
            pause = Math.min(1000, pause * 2);
        }
        throw new IllegalStateException("timed out after " + Durations.format(timeout) + " waiting for " + what
                + (last == null ? "" : " (last error: " + last.getMessage() + ")"));
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
