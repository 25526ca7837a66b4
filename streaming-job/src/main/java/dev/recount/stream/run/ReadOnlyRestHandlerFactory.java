package dev.recount.stream.run;

import java.util.Map;
import java.util.Optional;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.io.network.netty.InboundChannelHandlerFactory;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelHandler;

/**
 * Makes the REST API of the local MiniCluster read-only (Flink loads this through its ServiceLoader hook for REST
 * pipeline handlers). {@code web.submit.enable=false} only removes jar upload and run, and {@code web.cancel.enable}
 * only hides the Web UI's cancel button: {@code POST /jobs} (submit a job graph with its jars, i.e. run code in this
 * JVM), cancel, stop and savepoint requests stay open to every local user who can reach the port. With
 * {@link #READ_ONLY} set, as {@link LocalFlinkEnvironment} sets it, anything but GET and HEAD is answered 403,
 * except a checkpoint request that carries the JVM's own secret ({@link #CHECKPOINT_TOKEN}).
 *
 * <p>Inactive unless the option is set, and left out of the cluster job jar (streaming-job/pom.xml), so a real
 * cluster's REST API, which the Kubernetes operator drives, is never touched.
 */
public final class ReadOnlyRestHandlerFactory implements InboundChannelHandlerFactory {
    public static final ConfigOption<Boolean> READ_ONLY = ConfigOptions.key("recount.local.rest-read-only")
            .booleanType()
            .defaultValue(false)
            .withDescription(
                    "Answer every REST request but GET and HEAD with 403 (the local MiniCluster of recount stream).");

    /** When set, a checkpoint request ({@code POST /jobs/<id>/checkpoints}) with this secret is let through. */
    public static final ConfigOption<String> CHECKPOINT_TOKEN = ConfigOptions.key("recount.local.rest-checkpoint-token")
            .stringType()
            .noDefaultValue()
            .withDescription("The secret that lets a checkpoint request through the read-only REST API.");

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public Optional<ChannelHandler> createHandler(Configuration configuration, Map<String, String> responseHeaders) {
        return configuration.get(READ_ONLY)
                ? Optional.of(new ReadOnlyRestHandler(
                        responseHeaders,
                        configuration.getOptional(CHECKPOINT_TOKEN).orElse(null)))
                : Optional.empty();
    }
}
