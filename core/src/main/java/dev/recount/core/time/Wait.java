package dev.recount.core.time;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * Polling with a deadline: the one way recount's code waits for something it cannot be told about (a process to
 * answer, a lock to come free, a lake count to add up, a day's backfill to succeed). The first check runs at once;
 * between checks it pauses (a fixed interval, or one that doubles up to a longest), never past the deadline; the
 * last check runs at the deadline, so a wait of zero checks exactly once.
 *
 * <pre>{@code
 * Optional<Integer> port = Wait.upTo(timeout).backingOff(Duration.ofMillis(50), Duration.ofMillis(500))
 *         .untilPresent(() -> server.port());
 * }</pre>
 *
 * An exception from a check ends the wait at once (the check decides what is fatal: a process that exited); a check
 * that wants to try again after an error returns empty instead.
 */
public final class Wait {
    private final Duration timeout;
    private final ProcessClock clock;
    private final Duration firstPause;
    private final Duration longestPause;

    private Wait(Duration timeout, ProcessClock clock, Duration firstPause, Duration longestPause) {
        if (Objects.requireNonNull(timeout, "timeout").isNegative())
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        if (firstPause.isNegative() || longestPause.compareTo(firstPause) < 0) {
            throw new IllegalArgumentException(
                    "pauses must be 0 <= first <= longest, got " + firstPause + " and " + longestPause);
        }
        this.timeout = timeout;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.firstPause = firstPause;
        this.longestPause = longestPause;
    }

    /** Waits up to {@code timeout} on the system clock, pausing 100 ms between checks. */
    public static Wait upTo(Duration timeout) {
        return new Wait(timeout, ProcessClock.SYSTEM, Duration.ofMillis(100), Duration.ofMillis(100));
    }

    /** The same wait on {@code clock} (tests: {@link ProcessClock#manual()}). */
    public Wait on(ProcessClock clock) {
        return new Wait(timeout, clock, firstPause, longestPause);
    }

    /** Pauses {@code pause} between checks ({@link Duration#ZERO}: the check itself blocks, e.g. a Kafka poll). */
    public Wait every(Duration pause) {
        return new Wait(timeout, clock, pause, pause);
    }

    /** Pauses {@code first} after the first check, doubling up to {@code longest}: quick when it is quick. */
    public Wait backingOff(Duration first, Duration longest) {
        return new Wait(timeout, clock, first, longest);
    }

    public Duration timeout() {
        return timeout;
    }

    /** One check: a value when what is awaited is there, empty to check again. */
    @FunctionalInterface
    public interface Probe<T, E extends Exception> {
        Optional<T> get() throws E;
    }

    /** One check that holds or not. */
    @FunctionalInterface
    public interface Check<E extends Exception> {
        boolean holds() throws E;
    }

    /** One try whose every result the caller keeps (the last one is returned, done or not). */
    @FunctionalInterface
    public interface Attempt<T, E extends Exception> {
        T run() throws E;
    }

    /** Checks until {@code probe} has a value; empty when the deadline came first. */
    public <T, E extends Exception> Optional<T> untilPresent(Probe<T, E> probe) throws E, InterruptedException {
        Deadline deadline = Deadline.after(timeout, clock);
        Duration pause = firstPause;
        while (true) {
            Optional<T> value = probe.get();
            if (value.isPresent()) return value;
            if (deadline.passed()) return Optional.empty();
            clock.pause(min(pause, deadline.remaining()));
            pause = min(pause.multipliedBy(2), longestPause);
        }
    }

    /** Checks until {@code check} holds; false when the deadline came first. */
    public <E extends Exception> boolean until(Check<E> check) throws E, InterruptedException {
        return untilPresent(() -> check.holds() ? Optional.of(Boolean.TRUE) : Optional.<Boolean>empty())
                .isPresent();
    }

    /**
     * Runs {@code attempt} until {@code done} holds for its result or the deadline comes, and returns its last
     * result either way. Before each pause {@code beforePause} hears the result that was not done and the pause to
     * come (to say "trying again in 5m").
     */
    public <T, E extends Exception> T retry(
            Attempt<T, E> attempt, Predicate<T> done, BiConsumer<T, Duration> beforePause)
            throws E, InterruptedException {
        Deadline deadline = Deadline.after(timeout, clock);
        Duration pause = firstPause;
        while (true) {
            T result = attempt.run();
            if (done.test(result) || deadline.passed()) return result;
            Duration next = min(pause, deadline.remaining());
            beforePause.accept(result, next);
            clock.pause(next);
            pause = min(pause.multipliedBy(2), longestPause);
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
