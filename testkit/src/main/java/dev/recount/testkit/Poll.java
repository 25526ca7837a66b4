package dev.recount.testkit;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.pollinterval.IterativePollInterval;

/**
 * Waits for a condition with a deadline instead of sleeping a guessed time: Awaitility with the project's
 * defaults in one place — the first check at once, then a back-off doubling from 10 ms to at most 500 ms, exceptions
 * from the condition treated as "not yet". On timeout an {@link AssertionError} names what was awaited and the last
 * error seen (callers add what they last saw).
 */
public final class Poll {
    private static final Duration FIRST_PAUSE = Duration.ofMillis(10);
    private static final Duration LONGEST_PAUSE = Duration.ofMillis(500);

    private Poll() {}

    public static void until(Duration timeout, String what, Callable<Boolean> condition) {
        untilPresent(
                timeout,
                what,
                () -> Boolean.TRUE.equals(condition.call()) ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /** Polls until {@code probe} returns a value, and returns it. */
    public static <T> T untilPresent(Duration timeout, String what, Callable<Optional<T>> probe) {
        AtomicReference<Exception> lastError = new AtomicReference<>();
        Callable<Optional<T>> remembering = () -> {
            try {
                Optional<T> v = probe.call();
                lastError.set(null);
                return v;
            } catch (Exception e) {
                lastError.set(e);
                throw e;
            }
        };
        try {
            return await(what)
                    .atMost(timeout)
                    .pollInSameThread() // conditions use the caller's connections and clients, as before
                    .pollDelay(Duration.ZERO)
                    .pollInterval(new IterativePollInterval(
                            d -> d.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : d.multipliedBy(2),
                            FIRST_PAUSE))
                    .ignoreExceptions()
                    .until(remembering, Optional::isPresent)
                    .orElseThrow();
        } catch (ConditionTimeoutException timedOut) {
            Exception last = lastError.get();
            AssertionError err = new AssertionError("timed out after " + timeout + " waiting for " + what
                    + (last == null ? "" : " (last error: " + last + ")"));
            err.initCause(last != null ? last : timedOut);
            throw err;
        }
    }
}
