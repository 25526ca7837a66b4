package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.shaded.netty4.io.netty.channel.embedded.EmbeddedChannel;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.DefaultFullHttpRequest;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.FullHttpRequest;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.FullHttpResponse;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpMethod;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpResponseStatus;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

class LocalFlinkEnvironmentTest {
    @Test
    void theLocalClusterListensOnLoopbackOnlyWithAReadOnlyWebUi() {
        Configuration job = new Configuration();
        job.set(RestOptions.BIND_ADDRESS, "0.0.0.0");
        Configuration c = LocalFlinkEnvironment.loopbackOnly(job, 18081);

        assertThat(c.get(RestOptions.BIND_ADDRESS)).isEqualTo("127.0.0.1");
        assertThat(c.get(RestOptions.ADDRESS)).isEqualTo("127.0.0.1");
        assertThat(c.get(RestOptions.PORT)).isEqualTo(18081);
        assertThat(c.get(JobManagerOptions.BIND_HOST)).isEqualTo("127.0.0.1");
        assertThat(c.get(TaskManagerOptions.BIND_HOST)).isEqualTo("127.0.0.1");
        assertThat(c.get(WebOptions.SUBMIT_ENABLE)).isFalse();
        assertThat(c.get(WebOptions.CANCEL_ENABLE)).isFalse();
        assertThat(c.get(WebOptions.RESCALE_ENABLE)).isFalse();
        assertThat(c.get(ReadOnlyRestHandlerFactory.READ_ONLY)).isTrue();
        assertThat(job.get(ReadOnlyRestHandlerFactory.READ_ONLY))
                .as("the job's own configuration is untouched")
                .isFalse();
    }

    @Test
    void theWebUiTakesItsPortWhenFreeAndAnyFreeOneOtherwise() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertThat(LocalFlinkEnvironment.isFree(port)).isFalse();
            assertThat(LocalFlinkEnvironment.choosePort(port))
                    .isNotEqualTo(port)
                    .isBetween(LocalFlinkEnvironment.UNEPHEMERAL_FROM, LocalFlinkEnvironment.UNEPHEMERAL_TO - 1);
        }
        // Not from the system's ephemeral range, which this JVM's outgoing connections draw from too.
        assertThat(LocalFlinkEnvironment.choosePort(0))
                .isBetween(LocalFlinkEnvironment.UNEPHEMERAL_FROM, LocalFlinkEnvironment.UNEPHEMERAL_TO - 1);
    }

    @Test
    void theRestApiAnswersOnlyReads() {
        ReadOnlyRestHandlerFactory factory = new ReadOnlyRestHandlerFactory();
        assertThat(factory.createHandler(new Configuration(), Map.of()))
                .as("inactive unless asked for")
                .isEmpty();
        Configuration readOnly = new Configuration();
        readOnly.set(ReadOnlyRestHandlerFactory.READ_ONLY, true);

        EmbeddedChannel channel =
                new EmbeddedChannel(factory.createHandler(readOnly, Map.of()).orElseThrow());
        FullHttpRequest get = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/jobs/overview");
        channel.writeInbound(get);
        assertThat((Object) channel.readInbound())
                .as("a GET reaches Flink's router")
                .isSameAs(get);

        for (HttpMethod write :
                new HttpMethod[] {HttpMethod.POST, HttpMethod.PATCH, HttpMethod.DELETE, HttpMethod.PUT}) {
            channel = new EmbeddedChannel(
                    factory.createHandler(readOnly, Map.of()).orElseThrow());
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, write, "/jobs");
            channel.writeInbound(request);
            assertThat((Object) channel.readInbound()).as(write + " stops here").isNull();
            FullHttpResponse response = channel.readOutbound();
            assertThat(response.status()).isEqualTo(HttpResponseStatus.FORBIDDEN);
            assertThat(request.refCnt()).as("the refused request is released").isZero();
            assertThat(channel.isOpen()).isFalse();
            response.release();
        }
    }
}
