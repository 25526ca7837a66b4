package dev.recount.faults;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits for a condition with a deadline instead of sleeping a guessed time: the first check at once, then pauses
 * doubling from 10 ms to at most 500 ms; an exception from the condition counts as "not yet" and is named if the
 * deadline passes. The suite's own (its main code uses no test support); the one deadline loop of the suite.
 */
final class Poll {
    private static final Duration FIRST_PAUSE = Duration.ofMillis(10);
    private static final Duration LONGEST_PAUSE = Duration.ofMillis(500);

    private Poll() {}

    /** Waits a fixed time that is part of a fault's definition (an outage of 30 s), never to synchronise. */
    static void pause(Duration d) {
        if (!d.isNegative()) LockSupport.parkNanos(d.toNanos());
    }

    static void until(Duration timeout, String what, Callable<Boolean> condition) {
        untilPresent(
                timeout,
                what,
                () -> Boolean.TRUE.equals(condition.call()) ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /**
     * Polls until {@code probe} returns a value, and returns it.
     *
     * @throws IllegalStateException naming {@code what} and the last error seen, when {@code timeout} passes first
     */
    static <T> T untilPresent(Duration timeout, String what, Callable<Optional<T>> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Duration pause = FIRST_PAUSE;
        Exception lastError = null;
        while (true) {
            try {
                Optional<T> value = probe.call();
                if (value.isPresent()) return value.get();
                lastError = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            } catch (Exception e) {
                lastError = e;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(
                        "timed out after " + timeout + " waiting for " + what
                                + (lastError == null ? "" : " (last error: " + lastError + ")"),
                        lastError);
            }
            LockSupport.parkNanos(Math.min(left, pause.toNanos()));
            if (Thread.interrupted()) throw new IllegalStateException("interrupted while waiting for " + what);
            pause = pause.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : pause.multipliedBy(2);
        }
    }
}
