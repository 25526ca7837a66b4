package dev.recount.tools.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.tools.generate.Progress;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The demo's streaming job: {@code ./recount stream} in its own process (Flink needs its own JVM), started from the
 * earliest offsets, then watched through its Flink REST API, its committed progress and its consumer offsets.
 */
final class DemoStream {
    private static final Duration START_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration CLOSE_TIMEOUT = Duration.ofMinutes(4);
    /**
     * The Web UI's address in the job's log: the one thing only that process knows, so the demo reads it there (the
     * rest it asks the REST API, the database and Kafka).
     */
    private static final Pattern WEB_UI_LINE = Pattern.compile("(?i)web[ -]ui\\b.*?(https?://[^\\s\"']+)");

    private final ChildProcess process;

    private DemoStream(ChildProcess process) {
        this.process = process;
    }

    static DemoStream start(Path launcher, Map<String, String> env, Path log, Path configFile) throws Exception {
        return new DemoStream(
                ChildProcess.start(launcher, env, log, "stream", "--config", configFile.toString(), "--from-earliest"));
    }

    long pid() {
        return process.pid();
    }

    /** Waits until the job reports its Web UI and Flink says the job is RUNNING; returns the Web UI's address. */
    String awaitRunning() throws Exception {
        String url = Waits.awaitValue(START_TIMEOUT, "the streaming job to report its Web UI", () -> {
            requireAlive();
            Matcher m = WEB_UI_LINE.matcher(process.logText());
            return m.find() ? Optional.of(m.group(1).replaceAll("/+$", "")) : Optional.empty();
        });
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        ObjectMapper json = new ObjectMapper();
        Waits.awaitCondition(START_TIMEOUT, "the streaming job to be RUNNING", () -> {
            requireAlive();
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(url + "/jobs/overview")).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 && anyJobRunning(json.readTree(r.body()));
        });
        return url;
    }

    /** {@code GET /jobs/overview}: {@code {"jobs": [{"jid": ..., "state": "RUNNING", ...}]}}. */
    static boolean anyJobRunning(JsonNode overview) {
        return StreamSupport.stream(overview.path("jobs").spliterator(), false)
                .anyMatch(job -> "RUNNING".equals(job.path("state").asText()));
    }

    /**
     * Every main-range window is final once a committed checkpoint's watermark is past its end plus the allowed
     * lateness (stream_progress), and every record has been read (the job's committed offsets reach the end).
     */
    void awaitWindowsClosed(Map<String, String> env, Instant until, PrintWriter out) throws Exception {
        try (Admin admin = Admin.create(DemoConnections.kafka(env));
                WatermarkProgress progress = new WatermarkProgress(out, until, Progress.onTerminal())) {
            Waits.awaitCondition(
                    CLOSE_TIMEOUT, "the watermark to pass " + until + " and the input to be fully read", () -> {
                        requireAlive();
                        Optional<Long> complete;
                        try (Connection c = DemoConnections.admin(env);
                                Statement s = c.createStatement()) {
                            s.execute("SET search_path TO " + DemoWorkspace.SCHEMA);
                            complete = StreamProgressTable.lakeCompleteUntil(c);
                        }
                        complete.ifPresent(ms -> progress.at(Instant.ofEpochMilli(ms)));
                        return complete.isPresent()
                                && complete.get() >= until.toEpochMilli()
                                && inputFullyCommitted(admin);
                    });
        }
    }

    private static boolean inputFullyCommitted(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < DemoWorkspace.PARTITIONS; p++)
            latest.put(new TopicPartition(DemoWorkspace.INPUT, p), OffsetSpec.latest());
        var ends = admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
        for (GroupListing g : admin.listGroups().all().get(10, TimeUnit.SECONDS)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(g.groupId())
                    .partitionsToOffsetAndMetadata()
                    .get(10, TimeUnit.SECONDS);
            if (committed.keySet().stream().noneMatch(tp -> tp.topic().equals(DemoWorkspace.INPUT))) continue;
            boolean caughtUp = ends.entrySet().stream().allMatch(e -> {
                OffsetAndMetadata c = committed.get(e.getKey());
                return e.getValue().offset() == 0
                        || (c != null && c.offset() >= e.getValue().offset());
            });
            if (caughtUp) return true;
        }
        return false;
    }

    /** SIGTERM: the job stops cleanly (with a savepoint); then waits for the process to end. */
    void stop() throws InterruptedException {
        process.stop(Duration.ofSeconds(90));
    }

    private void requireAlive() {
        if (!process.isAlive()) {
            String text = process.logText();
            String tail =
                    text.lines().skip(Math.max(0, text.lines().count() - 15)).collect(Collectors.joining("\n"));
            throw new IllegalStateException(
                    "the streaming job stopped unexpectedly; see " + process.log() + "\n" + tail);
        }
    }
}
