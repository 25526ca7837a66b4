package dev.recount.testkit;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * Waits for a condition with a deadline instead of sleeping a guessed time. Between checks it parks with a
 * growing back-off (capped at 500 ms); on timeout the message names what was awaited and the last value seen.
 */
public final class Poll {
    private Poll() {}

    public static void until(Duration timeout, String what, Callable<Boolean> condition) {
        untilPresent(timeout, what, () -> Boolean.TRUE.equals(condition.call()) ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /** Polls until {@code probe} returns a value, and returns it. */
    public static <T> T untilPresent(Duration timeout, String what, Callable<Optional<T>> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pauseMillis = 10;
        Exception last = null;
        while (true) {
            try {
                Optional<T> v = probe.call();
                if (v.isPresent()) return v.get();
                last = null;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                AssertionError err = new AssertionError("timed out after " + timeout + " waiting for " + what
                        + (last == null ? "" : " (last error: " + last + ")"));
                if (last != null) err.initCause(last);
                throw err;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(pauseMillis).toNanos());
            pauseMillis = Math.min(500, pauseMillis * 2);
        }
    }
}
