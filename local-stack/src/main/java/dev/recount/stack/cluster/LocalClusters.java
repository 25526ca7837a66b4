package dev.recount.stack.cluster;

import dev.recount.core.time.Deadline;
import dev.recount.stack.embedded.StackLayout;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The local Flink and Spark standalone clusters next to the embedded Kafka and PostgreSQL ({@code up --cluster}):
 * each framework process its own JVM, on its framework's own classpath, everything on loopback. Start is idempotent
 * (it starts what does not run, e.g. a TaskManager a kill -9 took); stop stops what runs.
 */
public final class LocalClusters {
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    private final ClusterLayout layout;
    private final FlinkStandalone flink;
    private final SparkStandalone spark;

    public LocalClusters(StackLayout stack) {
        this.layout = new ClusterLayout(stack);
        this.flink = new FlinkStandalone(layout);
        this.spark = new SparkStandalone(layout);
    }

    public ClusterLayout layout() {
        return layout;
    }

    /** Whether {@code up --cluster} ever ran in this home (then status shows the clusters). */
    public boolean configured() {
        return Files.exists(layout.stateFile());
    }

    /** What {@code up --cluster} did. */
    public record UpResult(List<String> started, ClusterPorts ports) {}

    /**
     * Starts the processes that do not run and waits until Flink has its TaskManagers and Spark its Worker.
     *
     * @param avoid ports of the stack's own services
     */
    public UpResult up(ClusterClasspaths classpaths, Duration timeout, Consumer<String> progress, int... avoid) {
        boolean flinkRuns =
                flink.processes().stream().anyMatch(p -> p.runningPid().isPresent());
        boolean sparkRuns =
                spark.processes().stream().anyMatch(p -> p.runningPid().isPresent());
        ClusterPorts ports = ClusterPorts.choose(ClusterPorts.load(layout), flinkRuns, sparkRuns, avoid);
        ports.save(layout);
        List<String> started = new ArrayList<>();
        try {
            List<String> flinkStarted = flink.startMissing(classpaths.flink(), ports);
            flinkStarted.forEach(p -> progress.accept("starting the " + p));
            started.addAll(flinkStarted);
            List<String> sparkStarted = spark.startMissing(classpaths.spark(), ports);
            sparkStarted.forEach(p -> progress.accept("starting the " + p));
            started.addAll(sparkStarted);
            Deadline deadline = Deadline.after(timeout);
            flink.awaitReady(ports, timeout);
            spark.awaitReady(ports, deadline.remaining(Duration.ofSeconds(5)));
            return new UpResult(started, ports);
        } catch (RuntimeException e) {
            // As `up` does for Kafka and PostgreSQL: what this call started goes again, what ran keeps running.
            if (!started.isEmpty()) progress.accept("up --cluster failed; stopping what it started");
            List<DetachedJvm> all = new ArrayList<>(flink.processes());
            all.addAll(spark.processes());
            for (DetachedJvm p : all) {
                if (!started.contains(p.name())) continue;
                try {
                    p.stop(STOP_TIMEOUT);
                } catch (RuntimeException stopFailed) {
                    progress.accept("could not stop the " + p.name() + ": " + stopFailed.getMessage());
                }
            }
            throw e;
        }
    }

    /** Stops every cluster process that runs. @return what it stopped */
    public List<String> down() {
        List<String> stopped = new ArrayList<>(flink.stop(STOP_TIMEOUT));
        stopped.addAll(spark.stop(STOP_TIMEOUT));
        return stopped;
    }

    public List<ClusterProcessState> status() {
        List<ClusterProcessState> states = new ArrayList<>();
        List<DetachedJvm> all = new ArrayList<>(flink.processes());
        all.addAll(spark.processes());
        for (DetachedJvm p : all) {
            var pid = p.runningPid();
            states.add(new ClusterProcessState(p.name(), pid.isPresent(), pid.orElse(0), p.stalePid()));
        }
        return states;
    }

    public boolean allRunning() {
        return status().stream().allMatch(ClusterProcessState::running);
    }

    public boolean noneRunning() {
        return status().stream().noneMatch(ClusterProcessState::running);
    }

    public ClusterPorts ports() {
        return ClusterPorts.load(layout);
    }

    /** The addresses people and the launcher need: Web UIs, the Spark master, Flink's configuration directory. */
    public Map<String, String> addresses() {
        ClusterPorts ports = ports();
        Map<String, String> a = new LinkedHashMap<>();
        a.put("Flink Web UI", "http://127.0.0.1:" + ports.flinkRest());
        a.put("Spark master", SparkStandalone.masterUrl(ports));
        a.put("Spark master UI", "http://127.0.0.1:" + ports.sparkMasterUi());
        a.put("Spark worker UI", "http://127.0.0.1:" + ports.sparkWorkerUi());
        return a;
    }

    /**
     * What local.env exports while the clusters run, for {@code stream --cluster} (Flink's client reads the
     * configuration directory) and {@code backfill --cluster} (spark-submit's master and properties file).
     */
    public Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("RECOUNT_FLINK_CONF_DIR", layout.flinkConf().toAbsolutePath().toString());
        env.put("RECOUNT_SPARK_MASTER", SparkStandalone.masterUrl(ports()));
        env.put(
                "RECOUNT_SPARK_PROPERTIES",
                layout.sparkProperties().toAbsolutePath().toString());
        env.put("RECOUNT_SPARK_HOME", layout.sparkHome().toAbsolutePath().toString());
        return env;
    }
}
