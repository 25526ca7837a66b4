package dev.recount.faults;

import dev.recount.core.config.LocalEnvFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The local standalone clusters of the stack's home ({@code ./recount up --cluster}) and faults of their processes:
 * a Flink TaskManager or a Spark executor killed with kill -9, found by their pid files and command lines.
 */
final class ClusterControl {
    private static final Duration WAIT = Duration.ofMinutes(3);

    private final Stack stack;
    private final Launcher launcher;
    private final Path log;

    ClusterControl(Stack stack, Launcher launcher, Path log) {
        this.stack = stack;
        this.launcher = launcher;
        this.log = log;
    }

    /**
     * Starts the clusters, or whatever of them a kill took ({@code up --cluster} is idempotent), and returns the
     * stack's environment with the clusters' addresses (what local.env then exports).
     */
    Map<String, String> up() throws IOException {
        int exit = launcher.run(
                log, WAIT, "up", "--cluster", "--home", stack.home().toString());
        if (exit != 0) throw new IllegalStateException("`recount up --cluster` exited " + exit + "; see " + log);
        Map<String, String> env = new HashMap<>(stack.environment());
        LocalEnvFile.read(LocalEnvFile.in(stack.home())).forEach((name, value) -> {
            if (name.startsWith("RECOUNT_FLINK") || name.startsWith("RECOUNT_SPARK")) env.put(name, value);
        });
        return env;
    }

    /** Stops the clusters only; Kafka and PostgreSQL keep running for the other tests. */
    void down() {
        int exit = launcher.run(
                log, WAIT, "down", "--clusters-only", "--home", stack.home().toString());
        if (exit != 0)
            throw new IllegalStateException("`recount down --clusters-only` exited " + exit + "; see " + log);
    }

    /**
     * Every address a process of the clusters listens on that is not 127.0.0.1 (empty when all are on loopback):
     * the JobManager, both TaskManagers, the Spark Master and Worker, by their pid files.
     */
    List<String> listeningBeyondLoopback() throws IOException {
        List<String> beyond = new java.util.ArrayList<>();
        Path root = stack.home().resolve("clusters");
        for (String process : List.of(
                "flink-jobmanager", "flink-taskmanager-1", "flink-taskmanager-2", "spark-master", "spark-worker")) {
            long pid = readPid(root.resolve(process + ".pid"));
            for (String address : ListeningSockets.of(pid)) {
                if (!address.startsWith("127.0.0.1:")) beyond.add(process + " " + address);
            }
        }
        return beyond;
    }

    /** Whether the process of TaskManager {@code n} runs. */
    boolean taskManagerAlive(int n) {
        long pid = readPid(stack.home().resolve("clusters").resolve("flink-taskmanager-" + n + ".pid"));
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** kill -9 of the Flink JobManager; returns its pid. */
    long killJobManager() {
        return kill("flink-jobmanager", "the JobManager");
    }

    /** kill -9 of TaskManager {@code n}; returns its pid. */
    long killTaskManager(int n) {
        return kill("flink-taskmanager-" + n, "TaskManager " + n);
    }

    private long kill(String process, String name) {
        long pid = readPid(stack.home().resolve("clusters").resolve(process + ".pid"));
        Launcher.signal(pid, "KILL");
        Poll.until(
                Duration.ofSeconds(30),
                name + " (pid " + pid + ") to exit",
                () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        return pid;
    }

    /**
     * How often job {@code jobId} failed (and restarted) on the Flink cluster: the entries of its exception history,
     * from the cluster's REST API (its port is in the configuration `up --cluster` wrote).
     */
    int jobFailures(String jobId) throws IOException, InterruptedException {
        Path config = stack.home()
                .resolve("clusters")
                .resolve("flink")
                .resolve("conf")
                .resolve("config.yaml");
        String port = Files.readAllLines(config, StandardCharsets.UTF_8).stream()
                .filter(l -> l.startsWith("rest.port:"))
                .map(l -> l.substring("rest.port:".length()).strip())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no rest.port in " + config));
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/jobs/"
                                        + jobId + "/exceptions?maxExceptions=100"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200)
            throw new IllegalStateException("Flink REST answered " + r.statusCode() + ": " + r.body());
        return new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.body())
                .path("exceptionHistory")
                .path("entries")
                .size();
    }

    /** The TaskManagers' logs, for the accounting's check of what the job must never log. */
    String taskManagerLogs() throws IOException {
        StringBuilder all = new StringBuilder();
        try (var s = Files.list(stack.home().resolve("logs"))) {
            for (Path p : s.filter(f -> f.getFileName().toString().matches("flink-taskmanager-\\d+\\.log(\\.\\d+)?"))
                    .sorted()
                    .toList()) {
                all.append(Files.readString(p, StandardCharsets.UTF_8));
            }
        }
        return all.toString();
    }

    /**
     * Waits until an executor of an application started after {@code since} runs a task (its log says "Running task"),
     * then kills it with kill -9. Empty when {@code whileRunning} ends first (the application finished without one).
     */
    Optional<String> killExecutorRunningATask(Instant since, java.util.function.BooleanSupplier whileRunning) {
        Path work = stack.home().resolve("clusters").resolve("spark").resolve("work");
        Optional<Path> executorDir = Optional.empty();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (executorDir.isEmpty()) {
            if (!whileRunning.getAsBoolean()) return Optional.empty();
            if (System.nanoTime() > deadline)
                throw new IllegalStateException("no Spark executor ran a task within " + WAIT);
            executorDir = runningExecutor(work, since);
            if (executorDir.isEmpty())
                java.util.concurrent.locks.LockSupport.parkNanos(
                        Duration.ofMillis(50).toNanos());
        }
        String app = executorDir.get().getParent().getFileName().toString();
        String executor = executorDir.get().getFileName().toString();
        long pid = executorPid(app, executor)
                .orElseThrow(() -> new IllegalStateException(
                        "executor " + executor + " of " + app + " ran a task but has no process"));
        List<String> listening;
        try {
            listening = ListeningSockets.of(pid);
        } catch (IOException e) {
            listening = List.of("(unreadable: " + e.getMessage() + ")");
        }
        Launcher.signal(pid, "KILL");
        return Optional.of(
                "executor " + executor + " of " + app + " (pid " + pid + ", listening on " + listening + ")");
    }

    private static Optional<Path> runningExecutor(Path work, Instant since) {
        if (!Files.isDirectory(work)) return Optional.empty();
        try (var apps = Files.list(work)) {
            for (Path app : apps.filter(Files::isDirectory).toList()) {
                if (Files.getLastModifiedTime(app).toInstant().isBefore(since.minusSeconds(1))) continue;
                try (var executors = Files.list(app)) {
                    for (Path e : executors.filter(Files::isDirectory).toList()) {
                        Path stderr = e.resolve("stderr");
                        if (Files.exists(stderr)
                                && Files.readString(stderr, StandardCharsets.UTF_8)
                                        .contains("Running task")) {
                            return Optional.of(e);
                        }
                    }
                }
            }
        } catch (IOException e) {
            return Optional.empty(); // a directory appeared or vanished while listing: look again
        }
        return Optional.empty();
    }

    /** The executor JVM: CoarseGrainedExecutorBackend with that application and executor id on its command line. */
    private static Optional<Long> executorPid(String app, String executor) {
        return ProcessHandle.allProcesses()
                .filter(h -> {
                    List<String> cmd = commandLine(h.pid());
                    return cmd.contains("org.apache.spark.executor.CoarseGrainedExecutorBackend")
                            && cmd.contains(app)
                            && executorIdIs(cmd, executor);
                })
                .map(ProcessHandle::pid)
                .findFirst();
    }

    private static boolean executorIdIs(List<String> cmd, String executor) {
        int i = cmd.indexOf("--executor-id");
        return i >= 0 && i + 1 < cmd.size() && cmd.get(i + 1).equals(executor);
    }

    private static List<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return List.of(new String(raw, StandardCharsets.UTF_8).split("\0"));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    private static long readPid(Path file) {
        try {
            return Long.parseLong(
                    Files.readAllLines(file, StandardCharsets.UTF_8).get(0).strip());
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("no pid in " + file + ": do the local clusters run?", e);
        }
    }
}
