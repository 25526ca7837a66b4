package dev.recount.stream.run;

import dev.recount.stream.StreamJob;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Optional;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The execution environment of {@code ./recount stream}: under {@code flink run} the cluster's own, otherwise a local
 * MiniCluster with a Web UI that only this machine can reach.
 *
 * <p>The MiniCluster runs in the JVM that holds the stream login's password, so nothing of it may listen beyond
 * loopback: the REST/Web UI, the JobManager's RPC and the BlobServer bind 127.0.0.1 (Flink binds the wildcard address
 * by default), and the Web UI and its REST API are read-only ({@link ReadOnlyRestHandlerFactory}): they cannot
 * upload or run jars, submit job graphs, cancel, stop or rescale, so a local user who can reach the port can watch
 * but not run code in this JVM. The Web UI takes the configured port ({@code stream.web-ui-port}, 8081)
 * when it is free and any free port otherwise, so a second job on the same machine still starts.
 */
public final class LocalFlinkEnvironment {
    static final String LOOPBACK = "127.0.0.1";
    /** Ports tried for the Web UI when the preferred one is not free: below every common ephemeral range. */
    static final int UNEPHEMERAL_FROM = 20_000;

    static final int UNEPHEMERAL_TO = 32_768;

    private final int preferredWebUiPort;
    private int webUiPort = -1;
    /**
     * The one write the read-only REST API lets through: a checkpoint request carrying this secret (made here, never
     * written anywhere, so only this JVM knows it: {@link WindowCloseCheckpoints} asks through it).
     */
    private final String checkpointToken = newToken();
    /** The window operator's watermark, read in this JVM by {@link WindowCloseCheckpoints} (no REST polling). */
    private final WindowWatermarkGauges windowWatermarks = WindowWatermarkGauges.create(StreamJob.WINDOW);

    /** @param preferredWebUiPort {@code stream.web-ui-port}: used when free; 0 = any free port */
    public LocalFlinkEnvironment(int preferredWebUiPort) {
        if (preferredWebUiPort < 0 || preferredWebUiPort > 65535) {
            throw new IllegalArgumentException("stream.web-ui-port must be 0..65535, got " + preferredWebUiPort);
        }
        this.preferredWebUiPort = preferredWebUiPort;
    }

    /** The environment for a run whose job configuration is {@code conf} (what StreamRun.Environments asks). */
    public StreamExecutionEnvironment create(Configuration conf) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        if (!(env instanceof LocalStreamEnvironment)) return env; // `flink run`: the cluster's environment
        webUiPort = choosePort(preferredWebUiPort);
        Configuration local = loopbackOnly(conf, webUiPort);
        local.set(ReadOnlyRestHandlerFactory.CHECKPOINT_TOKEN, checkpointToken);
        return StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(windowWatermarks.reportingTo(local));
    }

    /** The secret a checkpoint request to the local REST API must carry ({@link ReadOnlyRestHandler#TOKEN_HEADER}). */
    public String checkpointToken() {
        return checkpointToken;
    }

    /** The window operator's watermark of the jobs this environment's MiniCluster runs. */
    public WindowWatermarkGauges windowWatermarks() {
        return windowWatermarks;
    }

    /** The Web UI's port once {@link #create} made a local MiniCluster; -1 under {@code flink run}. */
    public int webUiPort() {
        return webUiPort;
    }

    private static String newToken() {
        byte[] bytes = new byte[32];
        new java.security.SecureRandom().nextBytes(bytes);
        return java.util.HexFormat.of().formatHex(bytes);
    }

    /** The Web UI's address once {@link #create} made a local MiniCluster; empty under {@code flink run}. */
    public Optional<String> webUi() {
        return webUiPort > 0 ? Optional.of("http://" + LOOPBACK + ":" + webUiPort) : Optional.empty();
    }

    /** {@code conf} plus the settings that keep a local MiniCluster on loopback and its Web UI read-only. */
    static Configuration loopbackOnly(Configuration conf, int webUiPort) {
        Configuration c = new Configuration(conf);
        c.set(RestOptions.ADDRESS, LOOPBACK);
        c.set(RestOptions.BIND_ADDRESS, LOOPBACK);
        c.set(RestOptions.PORT, webUiPort);
        c.set(JobManagerOptions.ADDRESS, LOOPBACK);
        c.set(JobManagerOptions.BIND_HOST, LOOPBACK); // the JobManager's RPC and the BlobServer
        c.set(TaskManagerOptions.HOST, LOOPBACK);
        c.set(TaskManagerOptions.BIND_HOST, LOOPBACK); // the TaskManager's RPC and data port, should it open them
        c.set(WebOptions.SUBMIT_ENABLE, false);
        c.set(WebOptions.CANCEL_ENABLE, false);
        c.set(WebOptions.RESCALE_ENABLE, false);
        // The options above only shape the Web UI; this closes the REST calls behind them (and job submission).
        c.set(ReadOnlyRestHandlerFactory.READ_ONLY, true);
        return c;
    }

    /**
     * {@code preferred} when it is free on loopback, else (or for 0) a free port below the systems' ephemeral ranges
     * ({@link #UNEPHEMERAL_FROM}..{@link #UNEPHEMERAL_TO}). Not one the system picks: those come from the range every
     * outgoing connection takes its local port from (Linux 32768–60999, macOS 49152–65535), and between this check and
     * Flink's bind a connection of this very JVM (Kafka, PostgreSQL) could be given it, failing the start with "Could
     * not start rest endpoint". Below that range only another listener choosing the same number can collide; then the
     * start fails and says so, and a rerun picks again. The system's pick remains when no port there is free.
     */
    static int choosePort(int preferred) {
        if (preferred > 0 && isFree(preferred)) return preferred;
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = random.nextInt(UNEPHEMERAL_FROM, UNEPHEMERAL_TO);
            if (isFree(port)) return port;
        }
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("cannot find a free port on " + LOOPBACK + " for the Flink Web UI", e);
        }
    }

    static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
