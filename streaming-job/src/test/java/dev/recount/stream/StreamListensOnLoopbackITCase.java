package dev.recount.stream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.stream.testutils.StreamTestStack;
import dev.recount.testkit.ListeningSockets;
import dev.recount.testkit.Poll;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./recount stream} as a user runs it (the launcher, its own JVM, RECOUNT_NO_BUILD=1) against this test's
 * stack, with port 8081 already taken, as by a second job on the same host: it still starts, prints where its Web UI
 * is, every TCP socket its process listens on is bound to 127.0.0.1, and its REST API only reads.
 */
class StreamListensOnLoopbackITCase {
    private static final Duration START = Duration.ofMinutes(2);
    private static final Pattern WEB_UI = Pattern.compile("Flink Web UI: http://127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern JOB = Pattern.compile("job ([0-9a-f]{32}) running");

    private final StreamTestStack stack = new StreamTestStack();

    @TempDir
    Path home;

    @Test
    void aSecondJobStartsWhen8081IsTakenAndListensOnLoopbackOnly() throws Exception {
        // Writes home/recount.properties: this test's topics, schema (with its logins), lake and checkpoints.
        stack.newJob(stack.createTopic("loopback", 1), home, Map.of("stream.web-ui-port", "8081"));
        Path log = home.resolve("stream.log");
        // Taken for the whole run, by this test or, if it cannot bind it, by whatever already holds it.
        try (ServerSocket taken = occupy(8081)) {
            Process stream = launch(home.resolve("recount.properties"), log);
            try {
                int webUi = Poll.untilPresent(START, "the job to print its Web UI and run", () -> {
                    String text = read(log);
                    if (!stream.isAlive())
                        throw new AssertionError("`recount stream` exited " + stream.exitValue() + ":\n" + text);
                    Matcher port = WEB_UI.matcher(text);
                    return port.find() && JOB.matcher(text).find()
                            ? Optional.of(Integer.parseInt(port.group(1)))
                            : Optional.empty();
                });
                assertThat(webUi).as("the Web UI moved off the taken port").isNotEqualTo(8081);

                List<String> listening = ListeningSockets.of(stream.pid());
                assertThat(listening)
                        .as("sockets of pid " + stream.pid())
                        .contains("127.0.0.1:" + webUi)
                        .allSatisfy(a -> assertThat(a).as("listening address").startsWith("127.0.0.1:"));

                String jobId = matched(JOB, read(log));
                HttpClient http = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
                String base = "http://127.0.0.1:" + webUi;
                Poll.until(
                        Duration.ofSeconds(30),
                        "the job to be RUNNING in the Web UI",
                        () -> send(http, "GET", base + "/jobs/overview").body().contains("\"RUNNING\""));
                HttpResponse<String> submit = send(http, "POST", base + "/jobs");
                assertThat(submit.statusCode())
                        .as("job submission: " + submit.body())
                        .isEqualTo(403);
                HttpResponse<String> cancel = send(http, "PATCH", base + "/jobs/" + jobId + "?mode=cancel");
                assertThat(cancel.statusCode()).as("cancel: " + cancel.body()).isEqualTo(403);
                HttpResponse<String> checkpoint = send(http, "POST", base + "/jobs/" + jobId + "/checkpoints");
                assertThat(checkpoint.statusCode())
                        .as("a checkpoint without the JVM's secret: " + checkpoint.body())
                        .isEqualTo(403);
                assertThat(send(http, "GET", base + "/config").body())
                        .contains("\"web-submit\":false", "\"web-cancel\":false");
                assertThat(send(http, "GET", base + "/jobs/overview").body())
                        .as("still running")
                        .contains("\"RUNNING\"");
            } finally {
                stream.destroy(); // SIGTERM: stop with a savepoint
                if (!stream.waitFor(90, TimeUnit.SECONDS))
                    stream.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            assertThat(stream.exitValue())
                    .as("exit after SIGTERM; log:\n" + read(log))
                    .isZero();
        }
    }

    /** Binds {@code port} on loopback, or returns null when something else holds it already (then it is taken too). */
    private static ServerSocket occupy(int port) {
        try {
            return new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"));
        } catch (IOException e) {
            return null;
        }
    }

    private Process launch(Path config, Path log) throws IOException {
        Path root = Path.of(System.getProperty("recount.root")).toAbsolutePath();
        ProcessBuilder pb = new ProcessBuilder(
                        root.resolve("recount").toString(), "stream", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        env.keySet()
                .removeIf(k -> k.startsWith("PG") || k.startsWith("RECOUNT_") || k.equals("KAFKA_BOOTSTRAP_SERVERS"));
        env.put("RECOUNT_NO_BUILD", "1");
        env.put("RECOUNT_NO_LOCAL_ENV", "1");
        env.put("KAFKA_BOOTSTRAP_SERVERS", stack.stack().bootstrapServers());
        env.put("RECOUNT_JDBC_URL", stack.stack().jdbcUrl());
        return pb.start();
    }

    private static HttpResponse<String> send(HttpClient http, String method, String url) throws Exception {
        HttpRequest.BodyPublisher body =
                method.equals("GET") ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("{}");
        return http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json")
                        .method(method, body)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String matched(Pattern p, String text) {
        Matcher m = p.matcher(text);
        assertThat(m.find()).as(p + " in the log").isTrue();
        return m.group(1);
    }

    private static String read(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }
}
