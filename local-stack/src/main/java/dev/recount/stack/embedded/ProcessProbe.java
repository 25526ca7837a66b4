package dev.recount.stack.embedded;

import dev.recount.core.time.Wait;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Looks at other processes through /proc (the stack runs on Linux only: the PostgreSQL binaries are Linux ones).
 * A pid file alone proves nothing after a crash or a reboot: the pid may be gone or reused, so callers also check
 * the command line. Zombies count as gone (an orphan that its reaper has not collected yet).
 */
public final class ProcessProbe {
    private ProcessProbe() {}

    /** The command line of a live (non-zombie) process, or empty. */
    public static Optional<List<String>> commandLine(long pid) {
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            if (isZombie(proc)) return Optional.empty();
            byte[] raw = Files.readAllBytes(proc.resolve("cmdline"));
            if (raw.length == 0) return Optional.empty(); // kernel threads and exiting processes
            String all = new String(raw, StandardCharsets.UTF_8);
            return Optional.of(Arrays.asList(all.split("\0")));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    public static boolean isAlive(long pid) {
        return commandLine(pid).isPresent();
    }

    /** Waits until {@code pid} is gone; true if it went within {@code timeout}. */
    public static boolean awaitExit(long pid, Duration timeout) {
        try {
            return Wait.upTo(timeout)
                    .backingOff(Duration.ofMillis(10), Duration.ofMillis(200))
                    .until(() -> !isAlive(pid));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !isAlive(pid);
        }
    }

    /** Waits until a zombie {@code pid} has been reaped (or {@code timeout} passed): its pid file then means nothing. */
    static void awaitReaped(long pid, Duration timeout) {
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            Wait.upTo(timeout).every(Duration.ofMillis(50)).until(() -> !Files.exists(proc) || !isZombieQuietly(proc));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean isZombieQuietly(Path proc) {
        try {
            return isZombie(proc);
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isZombie(Path proc) throws IOException {
        // /proc/<pid>/stat: "pid (comm) S ..."; comm may contain spaces and parentheses, so split after the last ')'.
        String stat = Files.readString(proc.resolve("stat"), StandardCharsets.UTF_8);
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 >= stat.length()) return false;
        char state = stat.charAt(close + 2);
        return state == 'Z' || state == 'X';
    }
}
