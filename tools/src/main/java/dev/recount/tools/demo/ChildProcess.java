package dev.recount.tools.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A recount command run through the launcher in its own process (Flink and Spark each need their own JVM),
 * with its output in a log file the user can read when something goes wrong.
 */
final class ChildProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private ChildProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    static ChildProcess start(Path launcher, Map<String, String> env, Path log, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(launcher.toString());
        command.addAll(List.of(args));
        Files.createDirectories(log.getParent());
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
        pb.environment().putAll(env);
        // A child is a component: it logs in as its own login (postgres.password-dir). The administrator's password,
        // which only the demo's own reset needs, stays here.
        pb.environment().remove("PGPASSWORD");
        // The child must not rebuild inside a running demo, nor pick up another stack's local.env.
        pb.environment().put("RECOUNT_NO_BUILD", "1");
        pb.environment().put("RECOUNT_NO_LOCAL_ENV", "1");
        return new ChildProcess(String.join(" ", args), pb.start(), log);
    }

    /** Runs to completion and returns the exit code; fails if it takes longer than {@code timeout}. */
    int await(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("`recount " + name + "` did not finish within " + timeout + "; see " + log);
        }
        return process.exitValue();
    }

    /** The process id: the launcher execs the JVM, so this is the command's own JVM. */
    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    Path log() {
        return log;
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    /** SIGTERM, which the streaming job handles as a clean stop; then waits for the process to end. */
    void stop(Duration timeout) throws InterruptedException {
        if (!process.isAlive()) return;
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop(Duration.ofSeconds(60));
    }
}
