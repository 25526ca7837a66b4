package dev.recount.stack.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import dev.recount.stack.embedded.StackException;
import dev.recount.stack.embedded.StackFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A Spark 3.5 standalone cluster from Spark's own classes on the Maven classpath (no distribution): a Master and one
 * Worker, each its own JVM. The Worker starts executors as further JVMs from {@code SPARK_HOME/jars}; here that is a
 * directory of links to the same classpath's jars ({@link ClusterLayout#sparkHome()}).
 *
 * <p>Everything binds 127.0.0.1 ({@code --host}, {@code SPARK_LOCAL_IP}). Unlike Flink's REST API, Spark's RPC has a
 * shared secret ({@code spark.authenticate}): only who can read {@code spark-defaults.conf} (owner-only) can submit
 * an application, register a worker or talk to an executor. The Web UIs show state only (no kill links); the
 * Master's REST submission server stays off.
 */
final class SparkStandalone {
    static final String MASTER_MAIN = "org.apache.spark.deploy.master.Master";
    static final String WORKER_MAIN = "org.apache.spark.deploy.worker.Worker";
    static final int WORKER_CORES = 2;
    static final String WORKER_MEMORY = "2g";
    /** The --add-opens Spark's own launcher passes on Java 17 (the root pom's java17.opens). */
    static final List<String> JAVA17_OPTIONS = List.of(
            "-XX:+IgnoreUnrecognizedVMOptions",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
            "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
            "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
            "-Djdk.reflect.useDirectMethodHandle=false");

    private final ClusterLayout layout;
    private final DetachedJvm master;
    private final DetachedJvm worker;

    SparkStandalone(ClusterLayout layout) {
        this.layout = layout;
        String identity = layout.root().toAbsolutePath().toString();
        this.master = new DetachedJvm("spark master", layout.pidFile("spark-master"), identity + ":spark-master");
        this.worker = new DetachedJvm("spark worker", layout.pidFile("spark-worker"), identity + ":spark-worker");
    }

    List<DetachedJvm> processes() {
        return List.of(master, worker);
    }

    static String masterUrl(ClusterPorts ports) {
        return "spark://127.0.0.1:" + ports.sparkMaster();
    }

    /** spark-defaults.conf of the Master, the Worker and spark-submit; {@code secret} authenticates them all. */
    static String properties(String secret) {
        return String.join(
                "\n",
                "# Written by `recount up --cluster`. Owner-only: it holds the cluster's shared secret.",
                "spark.authenticate true",
                "spark.authenticate.secret " + secret,
                "spark.master.rest.enabled false",
                "spark.ui.killEnabled false",
                "spark.driver.host 127.0.0.1",
                "spark.driver.bindAddress 127.0.0.1",
                "spark.executor.memory 1g",
                // As the backfill's local mode: Spark's default of 200 is far too many tasks for a few cores.
                "spark.sql.shuffle.partitions 16",
                "");
    }

    /** Starts what does not run. @return what it started */
    List<String> startMissing(String classpath, ClusterPorts ports) {
        prepare(classpath);
        List<String> started = new ArrayList<>();
        if (master.runningPid().isEmpty()) {
            start(
                    master,
                    classpath,
                    MASTER_MAIN,
                    "spark-master",
                    List.of(
                            "--host",
                            "127.0.0.1",
                            "--port",
                            Integer.toString(ports.sparkMaster()),
                            "--webui-port",
                            Integer.toString(ports.sparkMasterUi())));
            started.add(master.name());
        }
        if (worker.runningPid().isEmpty()) {
            start(
                    worker,
                    classpath,
                    WORKER_MAIN,
                    "spark-worker",
                    List.of(
                            "--host",
                            "127.0.0.1",
                            "--webui-port",
                            Integer.toString(ports.sparkWorkerUi()),
                            "--cores",
                            Integer.toString(WORKER_CORES),
                            "--memory",
                            WORKER_MEMORY,
                            "--work-dir",
                            layout.sparkWork().toString(),
                            masterUrl(ports)));
            started.add(worker.name());
        }
        return started;
    }

    private void prepare(String classpath) {
        try {
            Files.createDirectories(layout.sparkWork());
            StackFiles.ownerOnlyDirectory(layout.sparkProperties().getParent());
            String secret = existingSecret().orElseGet(SparkStandalone::newSecret);
            StackFiles.writeAtomically(layout.sparkProperties(), properties(secret), true);
            StackFiles.writeAtomically(layout.sparkDir().resolve("log4j2.properties"), Log4jConfig.toFile(), false);
            // spark-submit's driver (`backfill --cluster`): warnings and recount's own lines on the console.
            StackFiles.writeAtomically(
                    layout.sparkProperties().resolveSibling("log4j2-driver.properties"), Log4jConfig.cli(), false);
            linkJars(classpath);
        } catch (IOException e) {
            throw new StackException(
                    "cannot prepare the Spark cluster in " + layout.sparkDir() + ": " + e.getMessage(), e);
        }
    }

    private Optional<String> existingSecret() throws IOException {
        if (!Files.exists(layout.sparkProperties())) return Optional.empty();
        return Files.readAllLines(layout.sparkProperties()).stream()
                .filter(l -> l.startsWith("spark.authenticate.secret "))
                .map(l -> l.substring("spark.authenticate.secret ".length()).strip())
                .findFirst();
    }

    private static String newSecret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** SPARK_HOME/jars as links to the classpath's jars, rebuilt each start (a rebuild may change versions). */
    private void linkJars(String classpath) throws IOException {
        Path jars = layout.sparkHome().resolve("jars");
        StackFiles.deleteTree(jars);
        Files.createDirectories(jars);
        Set<String> names = new HashSet<>();
        for (String entry : classpath.split(java.io.File.pathSeparator)) {
            if (entry.isBlank()) continue;
            Path jar = Path.of(entry);
            String name = jar.getFileName().toString();
            if (!names.add(name)) name = names.size() + "-" + name;
            Files.createSymbolicLink(jars.resolve(name), jar.toAbsolutePath());
        }
    }

    private void start(DetachedJvm jvm, String classpath, String main, String process, List<String> args) {
        List<String> options = new ArrayList<>(List.of(
                "-Xms128m",
                "-Xmx512m",
                "-XX:+UseG1GC",
                "-XX:+ExitOnOutOfMemoryError",
                "-Djava.awt.headless=true",
                "-Dlog.file=" + layout.log(process),
                "-Dlog4j.configurationFile=" + layout.sparkDir().resolve("log4j2.properties"),
                "-Dlog4j2.configurationFile=" + layout.sparkDir().resolve("log4j2.properties")));
        options.addAll(JAVA17_OPTIONS);
        List<String> all = new ArrayList<>(args);
        all.add(0, layout.sparkProperties().toString());
        all.add(0, "--properties-file");
        jvm.start(
                options,
                classpath,
                main,
                all,
                environment(),
                layout.sparkDir(),
                layout.stack().logs().resolve(process + ".out"));
    }

    /** What Spark's scripts would export: where its jars are, and loopback for every address it binds. */
    private Map<String, String> environment() {
        return Map.of(
                "SPARK_HOME",
                layout.sparkHome().toAbsolutePath().toString(),
                "SPARK_SCALA_VERSION",
                "2.12",
                "SPARK_LOCAL_IP",
                "127.0.0.1",
                "SPARK_CONF_DIR",
                layout.sparkProperties().getParent().toAbsolutePath().toString());
    }

    /** Waits until the Master's UI answers and the Worker is ALIVE there. */
    void awaitReady(ClusterPorts ports, Duration timeout) {
        ClusterReadiness.await(
                processes(),
                () -> aliveWorkers(ports.sparkMasterUi()) >= 1,
                timeout,
                "the Spark worker did not register with the master",
                layout.stack().logs());
    }

    /** Workers the Master lists as ALIVE (its UI's /json/), or -1 when it does not answer. */
    static int aliveWorkers(int masterUiPort) {
        return ClusterReadiness.getJson(masterUiPort, "/json/")
                .map(master -> {
                    int alive = 0;
                    for (JsonNode w : master.path("workers"))
                        if ("ALIVE".equals(w.path("state").asText())) alive++;
                    return alive;
                })
                .orElse(-1);
    }

    List<String> stop(Duration timeout) {
        List<String> stopped = new ArrayList<>();
        if (worker.stop(timeout)) stopped.add(worker.name());
        if (master.stop(timeout)) stopped.add(master.name());
        return stopped;
    }
}
