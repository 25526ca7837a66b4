package dev.recount.stack.embedded;

import dev.recount.core.time.Wait;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-node Kafka (KRaft, broker and controller in one process) with its data under {@code home/kafka}, run as
 * a detached JVM of its own ({@link KafkaBrokerMain}) with this JVM's classpath: the broker outlives
 * {@code recount up}, and SIGTERM from {@code recount down} makes it shut down in a controlled way.
 */
public final class KafkaBroker {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaBroker.class);
    static final String MAIN_CLASS = KafkaBrokerMain.class.getName();
    /** Log4j2 configuration of the broker process: INFO logs to home/logs/kafka.log, never to a console. */
    static final String LOG_CONFIG = "recount-kafka-log4j2.xml";

    private final StackLayout layout;

    public KafkaBroker(StackLayout layout) {
        this.layout = layout;
    }

    /** The broker's pid when its process runs; a recycled pid of some other process does not count. */
    public OptionalLong runningPid() {
        OptionalLong pid = StackFiles.readPid(layout.kafkaPidFile());
        if (pid.isEmpty()) return pid;
        Optional<List<String>> cmd = ProcessProbe.commandLine(pid.getAsLong());
        return cmd.isPresent() && runsOurProperties(cmd.get()) ? pid : OptionalLong.empty();
    }

    /** Our main class with this home's properties file as its first argument (the same file, symlinks or not). */
    private boolean runsOurProperties(List<String> commandLine) {
        int main = commandLine.indexOf(MAIN_CLASS);
        if (main < 0 || main + 1 >= commandLine.size()) return false;
        try {
            return Files.isSameFile(Path.of(commandLine.get(main + 1)), layout.kafkaProperties());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The pid a broker that is gone left behind (killed, crashed, machine rebooted). */
    public OptionalLong stalePid() {
        return runningPid().isPresent() ? OptionalLong.empty() : StackFiles.readPid(layout.kafkaPidFile());
    }

    static String serverProperties(StackLayout layout, int port, int controllerPort, int defaultPartitions) {
        String data = layout.kafkaData().toString();
        return String.join(
                "\n",
                "# Written by `recount up` at every start.",
                "process.roles=broker,controller",
                "node.id=1",
                // A static voter set (not a dynamic quorum): the controller port may then change between runs.
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "log.dirs=" + data,
                "metadata.log.dir=" + data,
                "num.partitions=" + defaultPartitions,
                "default.replication.factor=1",
                "min.insync.replicas=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=5",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=5",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                // After a kill -9 the restarted controller keeps the dead broker's registration until its session
                // expires, and the new broker cannot register before: 5 s instead of the default 9 s.
                "broker.heartbeat.interval.ms=1000",
                "broker.session.timeout.ms=5000",
                // Local data is kept until deleted: replayed or generated events may carry old timestamps.
                "log.retention.ms=-1",
                "num.network.threads=2",
                "num.io.threads=4",
                "");
    }

    /** Writes the broker's configuration and starts its process; returns its pid. Does not wait for it. */
    public long start(int port, int controllerPort, String clusterId, int defaultPartitions) {
        try {
            Files.createDirectories(layout.kafkaData());
            Files.createDirectories(layout.logs());
        } catch (IOException e) {
            throw new StackException("cannot create " + layout.kafkaData() + ": " + e.getMessage(), e);
        }
        StackFiles.writeAtomically(
                layout.kafkaProperties(), serverProperties(layout, port, controllerPort, defaultPartitions), false);
        List<String> cmd = new ArrayList<>();
        // setsid: the broker gets its own session, so a Ctrl-C or a closed terminal that ends `up` leaves it alone.
        onPath("setsid").ifPresent(p -> cmd.add(p.toString()));
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(
                "-Xms128m",
                "-Xmx512m",
                "-XX:+UseG1GC",
                "-XX:+ExitOnOutOfMemoryError",
                "-Djava.awt.headless=true",
                // C1 only: starts ~30% faster on 2 cores (every test JVM starts a broker); a local broker is not
                // CPU-bound.
                "-XX:TieredStopAtLevel=1",
                "-Dlog4j2.configurationFile=" + LOG_CONFIG,
                "-Drecount.log.dir=" + layout.logs(),
                "-cp",
                System.getProperty("java.class.path"),
                MAIN_CLASS,
                layout.kafkaProperties().toString(),
                clusterId,
                layout.kafkaPidFile().toString()));
        try {
            Process p = new ProcessBuilder(cmd)
                    .directory(layout.home().toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            layout.logs().resolve("kafka.out").toFile()))
                    .start();
            // Recorded at once so that `down` finds the broker even if this `up` dies before it answers.
            StackFiles.writeAtomically(layout.kafkaPidFile(), p.pid() + "\n", false);
            return p.pid();
        } catch (IOException e) {
            throw new StackException("cannot start the Kafka broker JVM: " + e.getMessage(), e);
        }
    }

    /** Waits until the broker answers a metadata request on {@code port}, or fails if its process exits. */
    public void awaitReady(int port, long pid, Duration timeout) {
        boolean ready;
        try {
            ready = Wait.upTo(timeout)
                    .backingOff(Duration.ofMillis(50), Duration.ofMillis(500))
                    .until(() -> {
                        if (!ProcessProbe.isAlive(pid)) {
                            throw new StackException("the Kafka broker exited during start-up: " + lastBrokerError()
                                    + "; see " + layout.logs().resolve("kafka.log"));
                        }
                        return Ports.isOpen(port) && answers(port, Duration.ofSeconds(5));
                    });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while waiting for the Kafka broker", e);
        }
        if (!ready) {
            throw new StackException(
                    "the Kafka broker (pid " + pid + ") did not answer on 127.0.0.1:" + port + " within "
                            + timeout.toSeconds() + " s; see " + layout.logs().resolve("kafka.log"));
        }
    }

    /** Whether a broker on {@code port} returns cluster metadata with at least one node. */
    public static boolean answers(int port, Duration timeout) {
        if (!Ports.isOpen(port)) return false;
        try (Admin admin = admin("127.0.0.1:" + port, timeout)) {
            return !admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) timeout.toMillis()))
                    .nodes()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .isEmpty();
        } catch (Exception e) {
            LOG.debug("Kafka on port {} does not answer yet: {}", port, e.toString());
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Stops the broker: SIGTERM (controlled shutdown), then SIGKILL if it has not exited within {@code timeout}. */
    public StopOutcome stop(Duration timeout) {
        OptionalLong pid = runningPid();
        if (pid.isEmpty()) return StopOutcome.NOT_RUNNING;
        ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroy);
        StopOutcome outcome = StopOutcome.STOPPED;
        if (!ProcessProbe.awaitExit(pid.getAsLong(), timeout)) {
            LOG.warn("Kafka broker pid {} did not stop within {}; killing it", pid.getAsLong(), timeout);
            ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroyForcibly);
            if (!ProcessProbe.awaitExit(pid.getAsLong(), Duration.ofSeconds(10))) {
                throw new StackException(
                        "the Kafka broker (pid " + pid.getAsLong() + ") does not stop, not even on SIGKILL");
            }
            outcome = StopOutcome.KILLED;
        }
        try {
            Files.deleteIfExists(layout.kafkaPidFile());
        } catch (IOException e) {
            LOG.warn("cannot remove {}: {}", layout.kafkaPidFile(), e.toString());
        }
        return outcome;
    }

    public enum StopOutcome {
        NOT_RUNNING,
        STOPPED,
        KILLED
    }

    static Admin admin(String bootstrapServers, Duration timeout) {
        int ms = (int) Math.max(1000, timeout.toMillis());
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                AdminClientConfig.CLIENT_ID_CONFIG,
                "recount-local",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                ms,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                ms,
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG,
                500,
                AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG,
                500));
    }

    private String lastBrokerError() {
        String fromOut = StackFiles.lastErrorLine(layout.logs().resolve("kafka.out"));
        return fromOut.isEmpty() ? StackFiles.lastErrorLine(layout.logs().resolve("kafka.log")) : fromOut;
    }

    private static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) return Optional.empty();
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) return Optional.of(candidate);
        }
        return Optional.empty();
    }
}
