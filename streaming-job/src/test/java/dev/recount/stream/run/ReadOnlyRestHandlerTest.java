package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.flink.shaded.netty4.io.netty.channel.embedded.EmbeddedChannel;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.DefaultFullHttpRequest;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.FullHttpRequest;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.FullHttpResponse;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpMethod;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

/** What the read-only REST API of the local MiniCluster lets through to Flink's router, and what it answers 403. */
class ReadOnlyRestHandlerTest {
    private static final String TOKEN = "a".repeat(64);
    private static final String CHECKPOINTS = "/jobs/0123456789abcdef0123456789abcdef/checkpoints";

    @Test
    void readsPassAndWritesAreRefused() {
        assertThat(passes(request(HttpMethod.GET, "/jobs/overview", null), TOKEN))
                .isTrue();
        assertThat(passes(request(HttpMethod.HEAD, "/config", null), TOKEN)).isTrue();
        assertThat(passes(request(HttpMethod.POST, "/jobs", TOKEN), TOKEN))
                .as("submission, even with the secret")
                .isFalse();
        assertThat(passes(request(HttpMethod.PATCH, "/jobs/0123456789abcdef0123456789abcdef", TOKEN), TOKEN))
                .isFalse();
    }

    @Test
    void aCheckpointRequestPassesOnlyWithTheSecret() {
        assertThat(passes(request(HttpMethod.POST, CHECKPOINTS, TOKEN), TOKEN)).isTrue();
        assertThat(passes(request(HttpMethod.POST, "/v1" + CHECKPOINTS, TOKEN), TOKEN))
                .isTrue();
        assertThat(passes(request(HttpMethod.POST, CHECKPOINTS, null), TOKEN))
                .as("no secret")
                .isFalse();
        assertThat(passes(request(HttpMethod.POST, CHECKPOINTS, "b".repeat(64)), TOKEN))
                .as("a wrong secret")
                .isFalse();
        assertThat(passes(request(HttpMethod.POST, CHECKPOINTS, TOKEN), null))
                .as("no secret configured")
                .isFalse();
        assertThat(passes(request(HttpMethod.POST, CHECKPOINTS + "/../../jobs", TOKEN), TOKEN))
                .as("another path")
                .isFalse();
        assertThat(passes(request(HttpMethod.POST, "/jobs/0123456789abcdef0123456789abcdef/savepoints", TOKEN), TOKEN))
                .as("a savepoint")
                .isFalse();
    }

    /** True when the request reached the next handler; false when it was answered 403 here. */
    private static boolean passes(FullHttpRequest request, String configuredToken) {
        EmbeddedChannel channel = new EmbeddedChannel(new ReadOnlyRestHandler(Map.of(), configuredToken));
        channel.writeInbound(request);
        Object forwarded = channel.readInbound();
        FullHttpResponse response = channel.readOutbound();
        channel.finishAndReleaseAll();
        if (forwarded != null) {
            assertThat(response).as("a forwarded request is not answered here").isNull();
            return true;
        }
        assertThat(response).as("a refused request is answered").isNotNull();
        assertThat(response.status().code()).isEqualTo(403);
        return false;
    }

    private static FullHttpRequest request(HttpMethod method, String uri, String token) {
        FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, uri);
        if (token != null) r.headers().set(ReadOnlyRestHandler.TOKEN_HEADER, token);
        return r;
    }
}
