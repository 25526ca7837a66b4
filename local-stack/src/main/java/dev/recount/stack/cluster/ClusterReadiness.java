package dev.recount.stack.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.time.Wait;
import dev.recount.stack.embedded.Ports;
import dev.recount.stack.embedded.StackException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/** How the local Flink and Spark clusters are waited for: their processes alive, and their own JSON saying ready. */
final class ClusterReadiness {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ClusterReadiness() {}

    /**
     * Polls {@code ready} (backing off from 100 ms to 500 ms) until it holds. Fails as soon as one of {@code
     * processes} has exited, or after {@code timeout} with "{@code notReady} within N s".
     */
    static void await(
            List<DetachedJvm> processes, BooleanSupplier ready, Duration timeout, String notReady, Path logs) {
        boolean isReady;
        try {
            isReady = Wait.upTo(timeout)
                    .backingOff(Duration.ofMillis(100), Duration.ofMillis(500))
                    .until(() -> {
                        for (DetachedJvm p : processes) {
                            if (p.runningPid().isEmpty()) {
                                throw new StackException("the " + p.name() + " exited during start-up; see " + logs);
                            }
                        }
                        return ready.getAsBoolean();
                    });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while waiting: " + notReady, e);
        }
        if (!isReady) throw new StackException(notReady + " within " + timeout.toSeconds() + " s; see " + logs);
    }

    /** GET {@code path} from a local web UI or REST API: its JSON, or empty when nothing answers 200 there. */
    static Optional<JsonNode> getJson(int port, String path) {
        if (port <= 0 || !Ports.isOpen(port)) return Optional.empty();
        try {
            HttpResponse<String> r = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) return Optional.empty();
            return Optional.of(JSON.readTree(r.body()));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
