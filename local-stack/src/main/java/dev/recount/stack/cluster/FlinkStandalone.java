package dev.recount.stack.cluster;

import dev.recount.stack.embedded.StackFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Flink 2.2 standalone session cluster from Flink's own classes on the Maven classpath (no distribution): a
 * JobManager ({@code StandaloneSessionClusterEntrypoint}, with the Web UI and REST API) and {@value #TASK_MANAGERS}
 * TaskManagers ({@code TaskManagerRunner}), each its own JVM, all configured by one {@code conf/config.yaml} that
 * {@code flink run} (what {@code recount stream --cluster} runs) reads as well.
 *
 * <p>Everything binds 127.0.0.1: REST/Web UI, the JobManager's RPC and BlobServer, the TaskManagers' RPC and data
 * ports. The REST API accepts job submissions (that is how {@code stream --cluster} submits), so anyone who can
 * reach it on this machine can run code in the TaskManagers: see docs/operations.md, "Threat model". Jar upload and
 * run from the Web UI are off, and the UI shows no cancel button.
 */
final class FlinkStandalone {
    static final int TASK_MANAGERS = 2;
    static final int SLOTS_PER_TASK_MANAGER = 2;
    static final String JOB_MANAGER_MAIN = "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
    static final String TASK_MANAGER_MAIN = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
    /** What Flink's own distribution passes to every JVM on Java 17 (env.java.default-opts.all). */
    static final List<String> JAVA17_OPTIONS = List.of(
            "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
            "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.text=ALL-UNNAMED",
            "--add-opens=java.base/java.time=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    private final ClusterLayout layout;
    private final DetachedJvm jobManager;
    private final List<DetachedJvm> taskManagers = new ArrayList<>();

    FlinkStandalone(ClusterLayout layout) {
        this.layout = layout;
        String identity = layout.root().toAbsolutePath().toString();
        this.jobManager =
                new DetachedJvm("flink jobmanager", layout.pidFile("flink-jobmanager"), identity + ":flink-jobmanager");
        for (int i = 1; i <= TASK_MANAGERS; i++) {
            taskManagers.add(new DetachedJvm(
                    "flink taskmanager " + i,
                    layout.pidFile("flink-taskmanager-" + i),
                    identity + ":flink-taskmanager-" + i));
        }
    }

    List<DetachedJvm> processes() {
        List<DetachedJvm> all = new ArrayList<>();
        all.add(jobManager);
        all.addAll(taskManagers);
        return all;
    }

    /** The configuration every process of the cluster and its client read. */
    static String config(ClusterLayout layout, ClusterPorts ports) {
        Path dir = layout.flinkDir().toAbsolutePath();
        return String.join(
                "\n",
                "# Written by `recount up --cluster` at every start. Everything on loopback.",
                "jobmanager.rpc.address: 127.0.0.1",
                "jobmanager.rpc.port: " + ports.flinkRpc(),
                "jobmanager.bind-host: 127.0.0.1",
                "blob.server.port: " + ports.flinkBlob(),
                "rest.address: 127.0.0.1",
                "rest.bind-address: 127.0.0.1",
                "rest.port: " + ports.flinkRest(),
                "taskmanager.host: 127.0.0.1",
                "taskmanager.bind-host: 127.0.0.1",
                "taskmanager.numberOfTaskSlots: " + SLOTS_PER_TASK_MANAGER,
                // Spread a job's subtasks over both TaskManagers, so losing one is a real partial failure; each has
                // slots enough to run the whole job alone until the other is back.
                "taskmanager.load-balance.mode: SLOTS",
                "jobmanager.memory.process.size: 1024m",
                "taskmanager.memory.process.size: 1280m",
                "taskmanager.memory.managed.size: 32m",
                "parallelism.default: 2",
                // A lost TaskManager is noticed within seconds (the default timeout is 50 s).
                "heartbeat.interval: 2000",
                "heartbeat.timeout: 10000",
                "web.submit.enable: false",
                "web.cancel.enable: false",
                "web.rescale.enable: false",
                "web.tmpdir: " + dir.resolve("web"),
                "web.upload.dir: " + dir.resolve("web"),
                "io.tmp.dirs: " + dir.resolve("tmp"),
                "");
    }

    /** Starts the processes that do not run (all, or the one a kill -9 took). @return what it started */
    List<String> startMissing(String classpath, ClusterPorts ports) {
        StackFiles.writeAtomically(layout.flinkConf().resolve("config.yaml"), config(layout, ports), false);
        StackFiles.writeAtomically(layout.flinkConf().resolve("log4j.properties"), Log4jConfig.toFile(), false);
        StackFiles.writeAtomically(layout.flinkConf().resolve("log4j-cli.properties"), Log4jConfig.cli(), false);
        List<String> started = new ArrayList<>();
        if (jobManager.runningPid().isEmpty()) {
            FlinkProcessMemory memory = FlinkProcessMemory.jobManager(classpath, layout.flinkConf());
            start(
                    jobManager,
                    classpath,
                    JOB_MANAGER_MAIN,
                    "flink-jobmanager",
                    memory.jvmOptions(),
                    memory.dynamicArgs());
            started.add(jobManager.name());
        }
        FlinkProcessMemory tmMemory = null;
        for (int i = 0; i < taskManagers.size(); i++) {
            DetachedJvm tm = taskManagers.get(i);
            if (tm.runningPid().isPresent()) continue;
            if (tmMemory == null) tmMemory = FlinkProcessMemory.taskManager(classpath, layout.flinkConf());
            String process = "flink-taskmanager-" + (i + 1);
            List<String> args = new ArrayList<>(tmMemory.dynamicArgs());
            args.addAll(List.of("-D", "taskmanager.resource-id=" + process));
            start(tm, classpath, TASK_MANAGER_MAIN, process, tmMemory.jvmOptions(), args);
            started.add(tm.name());
        }
        return started;
    }

    private void start(
            DetachedJvm jvm,
            String classpath,
            String main,
            String process,
            List<String> memory,
            List<String> extraArgs) {
        List<String> options = new ArrayList<>(memory);
        options.addAll(List.of(
                "-XX:+UseG1GC",
                "-XX:+ExitOnOutOfMemoryError",
                "-Djava.awt.headless=true",
                "-Dlog.file=" + layout.log(process),
                "-Dlog4j.configurationFile=" + layout.flinkConf().resolve("log4j.properties"),
                "-Dlog4j2.configurationFile=" + layout.flinkConf().resolve("log4j.properties")));
        options.addAll(JAVA17_OPTIONS);
        List<String> args =
                new ArrayList<>(List.of("--configDir", layout.flinkConf().toString()));
        args.addAll(extraArgs);
        jvm.start(
                options,
                classpath,
                main,
                args,
                Map.of(),
                layout.flinkDir(),
                layout.stack().logs().resolve(process + ".out"));
    }

    /** Waits until the REST API answers and every TaskManager has registered. */
    void awaitReady(ClusterPorts ports, Duration timeout) {
        ClusterReadiness.await(
                processes(),
                () -> registeredTaskManagers(ports.flinkRest()) >= TASK_MANAGERS,
                timeout,
                "the Flink cluster did not have " + TASK_MANAGERS + " TaskManagers",
                layout.stack().logs());
    }

    /** TaskManagers registered at the JobManager (GET /overview), or -1 when the REST API does not answer. */
    static int registeredTaskManagers(int restPort) {
        return ClusterReadiness.getJson(restPort, "/overview")
                .map(overview -> overview.path("taskmanagers").asInt(-1))
                .orElse(-1);
    }

    List<String> stop(Duration timeout) {
        List<String> stopped = new ArrayList<>();
        // TaskManagers first: their tasks are cancelled by their own shutdown, not failed over by the JobManager.
        for (DetachedJvm tm : taskManagers) if (tm.stop(timeout)) stopped.add(tm.name());
        if (jobManager.stop(timeout)) stopped.add(jobManager.name());
        return stopped;
    }
}
