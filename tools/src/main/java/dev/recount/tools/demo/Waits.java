package dev.recount.tools.demo;

import dev.recount.core.config.Durations;
import dev.recount.core.time.Wait;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

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
        AtomicReference<Exception> last = new AtomicReference<>();
        Optional<T> value = Wait.upTo(timeout)
                .backingOff(Duration.ofMillis(50), Duration.ofSeconds(1))
                .untilPresent(() -> {
                    try {
                        return probe.get();
                    } catch (IllegalStateException e) {
                        throw e;
                    } catch (Exception e) {
                        last.set(e); // not there yet: a refused connection, say
                        return Optional.<T>empty();
                    }
                });
        if (value.isPresent()) return value.get();
        throw new IllegalStateException("timed out after " + Durations.format(timeout) + " waiting for " + what
                + (last.get() == null ? "" : " (last error: " + last.get().getMessage() + ")"));
    }
}
