package dev.recount.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code ./recount} commands the way a user does — the launcher, each command in its own JVM — with a given
 * environment, their output appended to a log file. Nothing is built: the suite runs after the build
 * (RECOUNT_NO_BUILD=1), and the repository's own .recount/local.env is ignored (RECOUNT_NO_LOCAL_ENV=1).
 */
final class Launcher {
    private final Path root;
    private final Map<String, String> environment;
    private final List<Process> started = new java.util.concurrent.CopyOnWriteArrayList<>();

    Launcher(Path root, Map<String, String> environment) {
        this.root = root.toAbsolutePath().normalize();
        this.environment = Map.copyOf(environment);
    }

    static Path repositoryRoot() {
        return Path.of(System.getProperty("recount.root", ".")).toAbsolutePath().normalize();
    }

    /** A command running in the background; the launcher execs java, so this is the command's JVM. */
    Process start(Path log, String... args) {
        List<String> command = new ArrayList<>();
        command.add(root.resolve("recount").toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(environment);
        pb.environment().put("RECOUNT_NO_BUILD", "1");
        pb.environment().put("RECOUNT_NO_LOCAL_ENV", "1");
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(
                    log,
                    "\n$ ./recount " + String.join(" ", args) + "\n",
                    StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
            Process p = pb.start();
            started.add(p);
            return p;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start ./recount " + String.join(" ", args), e);
        }
    }

    /** Runs a command to its end; returns its exit code. */
    int run(Path log, Duration timeout, String... args) {
        Process p = start(log, args);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        "./recount " + String.join(" ", args) + " did not finish within " + timeout + "; see " + log);
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * kill -9 of every command started here that still runs, and waits for each to end: a round that failed part way
     * must not leave its stream job checkpointing against the next round's stack. Returns how many it killed.
     */
    int killRunning() throws InterruptedException {
        int killed = 0;
        for (Process p : started) {
            if (!p.isAlive()) continue;
            p.destroyForcibly();
            p.waitFor(1, TimeUnit.MINUTES);
            killed++;
        }
        return killed;
    }

    /** Sends a signal by name (STOP, CONT, INT, TERM, KILL) to a process. */
    static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
