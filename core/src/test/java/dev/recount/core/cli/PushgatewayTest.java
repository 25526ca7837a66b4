package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What a scheduled command sends a Pushgateway, received by a real HTTP server on a loopback port. */
class PushgatewayTest {
    record Received(String method, String path, String contentType, String body) {}

    HttpServer server;
    final List<Received> received = new CopyOnWriteArrayList<>();
    volatile int status = 200;

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            received.add(new Received(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    exchange.getRequestHeaders().getFirst("Content-Type"),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            byte[] answer = (status == 200 ? "" : "pushed metrics are invalid").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, answer.length == 0 ? -1 : answer.length);
            if (answer.length > 0) exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Test
    void postsItsGaugesUnderItsJobInTheTextFormat() throws Exception {
        Pushgateway g =
                new Pushgateway("recount_test").gauge("recount_test_a", 3).gauge("recount_test_b", -1);

        g.push(url() + "/");

        assertThat(received)
                .containsExactly(new Received("POST", "/metrics/job/recount_test", "text/plain; version=0.0.4", """
                        # TYPE recount_test_a gauge
                        recount_test_a 3
                        # TYPE recount_test_b gauge
                        recount_test_b -1
                        """));
    }

    @Test
    void aRunsOutcomeIsNamedAfterItsJobAndOnlyASuccessRecordsItsTime() {
        Instant at = Instant.parse("2026-11-29T03:30:00Z");
        assertThat(Pushgateway.outcome("recount_test", 3, true, at)
                        .gauge("recount_test_days", 2)
                        .text())
                .isEqualTo("""
                        # TYPE recount_test_last_run_timestamp_seconds gauge
                        recount_test_last_run_timestamp_seconds 1795923000
                        # TYPE recount_test_last_exit_code gauge
                        recount_test_last_exit_code 3
                        # TYPE recount_test_last_success_timestamp_seconds gauge
                        recount_test_last_success_timestamp_seconds 1795923000
                        # TYPE recount_test_days gauge
                        recount_test_days 2
                        """);
        assertThat(Pushgateway.outcome("recount_test", 1, false, at).text())
                .contains("recount_test_last_exit_code 1\n")
                .doesNotContain("last_success");
    }

    @Test
    void anAnswerOtherThan2xxFailsThePushWithWhatTheServerSaid() {
        status = 400;
        assertThatThrownBy(() -> new Pushgateway("recount_test").gauge("x", 1).push(url()))
                .isInstanceOf(IOException.class)
                .hasMessage("HTTP 400 from " + url() + ": pushed metrics are invalid");
    }

    @Test
    void pushesOnlyWhenTheVariableIsSetAndReportsAFailureAsOneLine() throws Exception {
        Pushgateway g = new Pushgateway("recount_test").gauge("x", 1);
        assertThat(g.pushIfConfigured(Map.of())).isNull();
        assertThat(g.pushIfConfigured(Map.of(Pushgateway.URL_VARIABLE, " "))).isNull();
        assertThat(received).isEmpty();

        assertThat(g.pushIfConfigured(Map.of(Pushgateway.URL_VARIABLE, url()))).isNull();
        assertThat(received).hasSize(1);

        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort(); // nothing listens there once it is closed
        }
        String nobody = "http://127.0.0.1:" + closed;
        assertThat(g.pushIfConfigured(Map.of(Pushgateway.URL_VARIABLE, nobody)))
                .startsWith("pushing metrics to " + nobody + " failed (the run's outcome stands): ")
                .doesNotContain("\n");
    }
}
