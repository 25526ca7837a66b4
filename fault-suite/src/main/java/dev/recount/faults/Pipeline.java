package dev.recount.faults;

import dev.recount.db.Logins;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * One isolated recount deployment on the shared stack — its own topics, schema, lake, checkpoints, metric-sets file
 * and config file — and the commands a user runs against it, each a real process: migrate, the stream job (started,
 * killed, stopped, drained), produce, backfill and reconcile.
 */
final class Pipeline {
    static final Duration WAIT = Duration.ofMinutes(5);

    final Path dir;
    final Path config;
    /** The metric-sets file the config names: every command reads it, the oracle too. */
    final Path metricSets;

    final String schema;
    final String input;
    final String deadLetter;
    final String backfill;
    private final Stack stack;
    private final Launcher launcher;
    private Process stream;
    private int streamStarts;
    /** On the local standalone clusters: `stream --cluster`, `backfill --cluster`. */
    private boolean onClusters;

    private java.util.concurrent.Callable<String> clusterLogs = () -> "";

    private Pipeline(
            Path dir,
            Stack stack,
            Launcher launcher,
            String schema,
            String input,
            String deadLetter,
            String backfill,
            Path config,
            Path metricSets) {
        this.dir = dir;
        this.metricSets = metricSets;
        this.stack = stack;
        this.launcher = launcher;
        this.schema = schema;
        this.input = input;
        this.deadLetter = deadLetter;
        this.backfill = backfill;
        this.config = config;
    }

    /**
     * A deployment migrated for the sets of {@code metricSetsYaml}, with a login per component.
     *
     * @param settings recount settings on top of the suite's (window, watermark and checkpoint settings)
     * @param metricSetsYaml the metric-sets file's text
     */
    static Pipeline create(Path dir, Stack stack, Map<String, String> settings, String metricSetsYaml)
            throws IOException {
        return create(dir, stack, settings, metricSetsYaml, stack.environment());
    }

    /**
     * This pipeline on the local standalone clusters ({@code up --cluster}): the stream job submitted to the Flink
     * cluster, the backfill to the Spark cluster. {@code environment} holds the clusters' addresses; the
     * TaskManagers' logs count as the job's logs.
     */
    static Pipeline onClusters(
            Path dir,
            Stack stack,
            Map<String, String> settings,
            String metricSetsYaml,
            Map<String, String> environment,
            java.util.concurrent.Callable<String> clusterLogs)
            throws IOException {
        Pipeline p = create(dir, stack, settings, metricSetsYaml, environment);
        p.onClusters = true;
        p.clusterLogs = clusterLogs;
        return p;
    }

    private static Pipeline create(
            Path dir, Stack stack, Map<String, String> settings, String metricSetsYaml, Map<String, String> environment)
            throws IOException {
        String input = Names.unique("faults-in");
        String dlq = input + "-dlq";
        String late = input + "-late";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()))) {
            admin.createTopics(List.of(
                            // As a broker before Kafka 4.0 does by default: any record timestamp is accepted,
                            // so the poison corpus can send one near 2^63.
                            new NewTopic(input, 3, (short) 1)
                                    .configs(Map.of("message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE))),
                            new NewTopic(dlq, 3, (short) 1),
                            new NewTopic(late, 3, (short) 1)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create the topics of " + input, e);
        }
        String schema = stack.createSchema("faults");
        Files.createDirectories(dir);
        Path metricSets = dir.resolve("metric-sets.yaml");
        Files.writeString(metricSets, metricSetsYaml, StandardCharsets.UTF_8);

        Map<String, String> values = new TreeMap<>();
        values.put("topics.input", input);
        values.put("topics.dead-letter", dlq);
        values.put("topics.backfill", late);
        values.put("postgres.schema", schema);
        values.put("lake.path", dir.resolve("lake").toString());
        values.put("stream.checkpoint-dir", dir.resolve("checkpoints").toString());
        values.put("stream.web-ui-port", "0");
        values.put("reconcile.report-dir", dir.resolve("reports").toString());
        values.put("metric-sets.file", metricSets.toString());
        values.putAll(settings);
        Path config = dir.resolve("recount.properties");
        Properties p = new Properties();
        p.putAll(values);
        try (Writer w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
            p.store(w, "fault suite round");
        }
        Pipeline pipeline = new Pipeline(
                dir,
                stack,
                new Launcher(Launcher.repositoryRoot(), environment),
                schema,
                input,
                dlq,
                late,
                config,
                metricSets);
        pipeline.migrate();
        // A login per component (passwords in the stack's password directory, which local.env's
        // RECOUNT_PGPASSWORD_DIR names): the commands log in as their own logins, as after `./recount up`.
        try (Connection c = stack.adminConnection()) {
            Logins.ensureLocal(c, schema, stack.passwordDir());
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the logins of schema " + schema, e);
        }
        return pipeline;
    }

    /**
     * `./recount migrate` as the administrator: the migrations, and the tables of every set of the metric-sets file
     * that has none yet (how a user adds a set to a running deployment).
     */
    void migrate() {
        int exit = launcher.run(log("migrate"), WAIT, "migrate", "--config", config.toString());
        if (exit != 0) throw new IllegalStateException("migrate exited " + exit + "; see " + log("migrate"));
    }

    /** Replaces the metric-sets file (every command started from now on reads the new one). */
    void writeMetricSets(String yaml) throws IOException {
        Files.writeString(metricSets, yaml, StandardCharsets.UTF_8);
    }

    Path log(String name) {
        return dir.resolve("logs").resolve(name + ".log");
    }

    /** Starts `./recount stream` (resuming from its checkpoints, as after a crash a user would). */
    Process startStream() {
        stream =
                launcher.start(log("stream-" + (++streamStarts)), withCluster("stream", "--config", config.toString()));
        return stream;
    }

    Process stream() {
        return stream;
    }

    /** The log of the stream job started last. */
    Path streamLog() {
        return log("stream-" + streamStarts);
    }

    /** Waits until the stream job started last says that its job runs; fails at once if it exited. */
    void awaitRunning() {
        Path logFile = streamLog();
        Poll.until(Duration.ofMinutes(3), "the stream job to run (" + logFile + ")", () -> {
            if (!stream.isAlive()) {
                throw new IllegalStateException(
                        "the stream job exited " + stream.exitValue() + ": " + Logs.lastLines(logFile));
            }
            return Files.exists(logFile) && Files.readString(logFile).contains(" running");
        });
    }

    /** Sends records with their own keys and record timestamps (a producer whose clock is off, a huge key). */
    void sendDirect(List<PoisonCorpus.Direct> records) {
        Properties p = new Properties();
        p.put("bootstrap.servers", stack.bootstrapServers());
        p.put("key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        p.put("value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        p.put("acks", "all");
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(p)) {
            for (PoisonCorpus.Direct d : records) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                                input, null, d.recordTs(), d.key(), d.value()))
                        .get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot send the direct records", e);
        }
    }

    int streamStarts() {
        return streamStarts;
    }

    /** kill -9 of the whole stream JVM (JobManager, TaskManager, committers: everything). */
    void killStream() throws InterruptedException {
        stream.destroyForcibly();
        stream.waitFor(1, TimeUnit.MINUTES);
    }

    /** kill -9 of every command of this pipeline still running (none, after a round that passed). */
    int killRunning() throws InterruptedException {
        return launcher.killRunning();
    }

    /** SIGTERM: the job stops with a savepoint, as Ctrl-C does. */
    void stopStream() throws InterruptedException {
        stream.destroy();
        if (!stream.waitFor(3, TimeUnit.MINUTES)) {
            stream.destroyForcibly();
            throw new IllegalStateException("the stream job did not stop on SIGTERM within 3 min; see " + streamLog());
        }
    }

    /** `./recount stream --bounded`: reads to the offsets latest at its start and flushes every window. */
    int drain() {
        return launcher.run(
                log("stream-drain"),
                Duration.ofMinutes(10),
                withCluster("stream", "--bounded", "--config", config.toString()));
    }

    Process startProduce(Path file, double rate) {
        return launcher.start(
                log("produce"),
                "produce",
                "--file",
                file.toString(),
                "--rate",
                Double.toString(rate),
                "--config",
                config.toString());
    }

    /**
     * `backfill range --force`: the drain ended with every window flushed, so the lake is complete although the last
     * real watermark (what stream_progress records) lies before the tail's windows.
     */
    int backfillRange(Instant from, Instant to, String... options) {
        return launcher.run(log("backfill"), WAIT, backfillRangeArgs(from, to, options));
    }

    /** `backfill range --force` running in the background (to inject a fault while it runs). */
    Process startBackfillRange(Instant from, Instant to) {
        return launcher.start(log("backfill"), backfillRangeArgs(from, to));
    }

    private String[] backfillRangeArgs(Instant from, Instant to, String... options) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "backfill",
                "range",
                "--from",
                from.toString(),
                "--to",
                to.toString(),
                "--force",
                "--config",
                config.toString()));
        args.addAll(List.of(options));
        return withCluster(args.toArray(String[]::new));
    }

    private String[] withCluster(String... args) {
        if (!onClusters) return args;
        String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = "--cluster";
        return all;
    }

    Process startReconcile(Instant from, Instant to, String... options) {
        List<String> args = new java.util.ArrayList<>(
                List.of("reconcile", "--from", from.toString(), "--to", to.toString(), "--config", config.toString()));
        args.addAll(List.of(options));
        return launcher.start(log("reconcile"), args.toArray(String[]::new));
    }

    int reconcile(Instant from, Instant to, String... options) throws InterruptedException {
        Process p = startReconcile(from, to, options);
        if (!p.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("reconcile did not finish within " + WAIT);
        }
        return p.exitValue();
    }

    Connection connection() throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    /** When the stream job last committed to PostgreSQL, if ever. */
    Optional<Instant> lastCommit() {
        try (Connection c = connection();
                PreparedStatement ps = c.prepareStatement("SELECT max(updated_at) FROM stream_progress");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            java.sql.Timestamp t = rs.getTimestamp(1);
            return Optional.ofNullable(t).map(java.sql.Timestamp::toInstant);
        } catch (SQLException e) {
            return Optional.empty(); // PostgreSQL away: nothing committed that we can see
        }
    }

    /**
     * Waits until the stream job commits after {@code after} (the moment the fault ended or the job was restarted:
     * a commit of the old process must not count) and returns how long after {@code faultAt} that was.
     */
    Duration awaitCommitAfter(Instant after, Instant faultAt, Duration timeout) {
        Instant committed = Poll.untilPresent(
                timeout, "a stream commit after " + after, () -> lastCommit().filter(t -> t.isAfter(after)));
        return Duration.between(faultAt, committed);
    }

    /** The job's checkpoints on disk: chk-N directories of every run, complete ({@code _metadata}) or not. */
    List<Path> checkpointDirs() throws IOException {
        Path root = dir.resolve("checkpoints");
        if (!Files.exists(root)) return List.of();
        try (var s = Files.walk(root, 2)) {
            return s.filter(p -> p.getFileName().toString().startsWith("chk-"))
                    .sorted()
                    .toList();
        }
    }

    /**
     * How often the running stream job has failed (and restarted) so far, from its own Web UI's REST API: the
     * entries of /jobs/&lt;id&gt;/exceptions. The URL and the job id are the ones `stream` printed.
     */
    int failuresOfRunningJob() throws IOException, InterruptedException {
        String log = Files.readString(streamLog(), StandardCharsets.UTF_8);
        java.util.regex.Matcher ui =
                java.util.regex.Pattern.compile("Web UI: (http://[^\\s]+)").matcher(log);
        java.util.regex.Matcher job =
                java.util.regex.Pattern.compile("job ([0-9a-f]{32}) running").matcher(log);
        if (!ui.find() || !job.find()) throw new IllegalStateException("no Web UI or job id in " + streamLog());
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                        ui.group(1) + "/jobs/" + job.group(1) + "/exceptions?maxExceptions=100"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200)
            throw new IllegalStateException("Flink REST answered " + r.statusCode() + ": " + r.body());
        com.fasterxml.jackson.databind.JsonNode entries = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.body())
                .path("exceptionHistory")
                .path("entries");
        return entries.size();
    }

    String streamLogs() throws IOException {
        StringBuilder all = new StringBuilder();
        try (var s = Files.list(dir.resolve("logs"))) {
            for (Path p : s.filter(f -> f.getFileName().toString().startsWith("stream"))
                    .sorted()
                    .toList()) {
                all.append(Files.readString(p, StandardCharsets.UTF_8));
            }
        }
        try {
            all.append(clusterLogs.call());
        } catch (Exception e) {
            throw new IOException("cannot read the TaskManagers' logs", e);
        }
        return all.toString();
    }
}
