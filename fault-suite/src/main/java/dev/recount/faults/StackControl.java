package dev.recount.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Faults of the embedded stack's two services, by their real processes: the Kafka broker stopped (SIGTERM, a
 * controlled shutdown) and started again by {@code ./recount up}; PostgreSQL stopped (SIGINT, PostgreSQL's fast
 * shutdown) and started again the same way, or frozen (SIGSTOP to the postmaster and every backend) and thawed.
 */
final class StackControl {
    private static final Duration WAIT = Duration.ofMinutes(2);

    private final Stack stack;
    private final Launcher launcher;
    private final Path log;

    StackControl(Stack stack, Launcher launcher, Path log) {
        this.stack = stack;
        this.launcher = launcher;
        this.log = log;
    }

    void stopBroker() {
        long pid = readPid(stack.home().resolve("kafka").resolve("broker.pid"));
        Launcher.signal(pid, "TERM");
        Poll.until(
                WAIT,
                "the Kafka broker (pid " + pid + ") to exit",
                () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
    }

    void stopPostgres() {
        long pid = postmasterPid();
        Launcher.signal(pid, "INT");
        Poll.until(
                WAIT,
                "PostgreSQL (pid " + pid + ") to exit",
                () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
    }

    /** Starts whatever of the stack is not running ({@code ./recount up} is idempotent), same data, same ports. */
    void startMissing() {
        int exit = launcher.run(log, WAIT, "up", "--home", stack.home().toString());
        if (exit != 0)
            throw new IllegalStateException("`recount up` exited " + exit + " restarting the stack; see " + log);
    }

    /**
     * SIGSTOP to the postmaster and all its children: connections stay open, nothing answers. The postmaster first, so
     * it forks nothing more; a child that ended after it was listed (a backend whose session closed) is skipped. If a
     * signal fails otherwise, what was stopped is thawed before the failure goes up: a stack left frozen would fail
     * every later round.
     */
    List<Long> freezePostgres() {
        return freeze(postgresProcesses());
    }

    /** SIGSTOP to each of {@code pids} in order, as {@link #freezePostgres}; returns the ones stopped. */
    static List<Long> freeze(List<Long> pids) {
        List<Long> stopped = new ArrayList<>();
        try {
            for (long pid : pids) {
                try {
                    Launcher.signal(pid, "STOP");
                    stopped.add(pid);
                } catch (IllegalStateException e) {
                    if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) throw e;
                }
            }
            return stopped;
        } catch (RuntimeException e) {
            thaw(stopped);
            throw e;
        }
    }

    static void thaw(List<Long> pids) {
        for (long pid : pids) {
            if (ProcessHandle.of(pid).isPresent()) Launcher.signal(pid, "CONT");
        }
    }

    boolean postgresAnswers() {
        try (Connection c = stack.adminConnection()) {
            return c.isValid(2);
        } catch (Exception e) {
            return false;
        }
    }

    private List<Long> postgresProcesses() {
        long postmaster = postmasterPid();
        List<Long> pids = new ArrayList<>();
        pids.add(postmaster);
        ProcessHandle.of(postmaster).ifPresent(h -> h.descendants().forEach(d -> pids.add(d.pid())));
        return pids;
    }

    private long postmasterPid() {
        return readPid(stack.home().resolve("postgres").resolve("data").resolve("postmaster.pid"));
    }

    private static long readPid(Path file) {
        try {
            Optional<String> first =
                    Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst();
            return Long.parseLong(first.orElseThrow().trim());
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("no pid in " + file + ": is the service running?", e);
        }
    }
}
