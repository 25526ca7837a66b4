package dev.recount.testkit;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real HTTP server on a loopback port standing in for a Prometheus Pushgateway: it answers 200 to every push and
 * keeps what it received, so a test can check what a scheduled command pushed. Not a Pushgateway: it merges nothing
 * and serves nothing back.
 */
public final class RecordingPushgateway implements AutoCloseable {
    /** One push: {@code POST /metrics/job/recount_x} and its body in the text exposition format. */
    public record Push(String method, String path, String body) {}

    private final HttpServer server;
    private final List<Push> pushes = new CopyOnWriteArrayList<>();

    public RecordingPushgateway() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", exchange -> {
            pushes.add(new Push(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
    }

    /** The base URL a command takes from {@code RECOUNT_PUSHGATEWAY_URL}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** {@code RECOUNT_PUSHGATEWAY_URL} set to this server, as a command's environment. */
    public Map<String, String> environment() {
        return Map.of("RECOUNT_PUSHGATEWAY_URL", url());
    }

    /** Every push so far, oldest first. */
    public List<Push> pushes() {
        return List.copyOf(pushes);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
