package dev.recount.tools.demo;

import dev.recount.core.config.Durations;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Polling with a deadline and a growing pause: how the demo waits for the processes it started. */
final class Waits {
    private Waits() {}

    interface Check {
        boolean holds() throws Exception;
    }

    interface Probe<T> {
        Optional<T> get() throws Exception;
    }

    static void awaitCondition(Duration timeout, String what, Check check) throws Exception {
        awaitValue(timeout, what, () -> check.holds() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /** Polls until {@code probe} has a value; an {@link IllegalStateException} (a process died) ends the wait at once. */
    static <T> T awaitValue(Duration timeout, String what, Probe<T> probe) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 50;
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                Optional<T> v = probe.get();
                if (v.isPresent()) return v.get();
            } catch (IllegalStateException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pause));
            pause = Math.min(1000, pause * 2);
        }
        throw new IllegalStateException("timed out after " + Durations.format(timeout) + " waiting for " + what
                + (last == null ? "" : " (last error: " + last.getMessage() + ")"));
    }
}
