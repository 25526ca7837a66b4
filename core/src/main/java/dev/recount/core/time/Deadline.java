package dev.recount.core.time;

import java.time.Duration;
import java.util.Objects;

/**
 * A point on the {@link ProcessClock} by which something must be done: several steps that share one timeout (start
 * PostgreSQL, then Kafka, then create topics within {@code up --wait}) each take what is {@link #remaining} of it.
 */
public final class Deadline {
    private final ProcessClock clock;
    private final Duration timeout;
    private final long endNanos;

    private Deadline(ProcessClock clock, Duration timeout) {
        this.clock = Objects.requireNonNull(clock, "clock");
        if (Objects.requireNonNull(timeout, "timeout").isNegative())
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        this.timeout = timeout;
        this.endNanos = clock.nanoTime() + timeout.toNanos();
    }

    /** {@code timeout} from now on the system clock. */
    public static Deadline after(Duration timeout) {
        return new Deadline(ProcessClock.SYSTEM, timeout);
    }

    /** {@code timeout} from now on {@code clock}. */
    public static Deadline after(Duration timeout, ProcessClock clock) {
        return new Deadline(clock, timeout);
    }

    /** The whole time this deadline gave, as asked for (for messages: "gave up after 2m"). */
    public Duration timeout() {
        return timeout;
    }

    public ProcessClock clock() {
        return clock;
    }

    /** True once the deadline is reached. */
    public boolean passed() {
        return clock.nanoTime() - endNanos >= 0;
    }

    /** The time left, zero once passed. */
    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, endNanos - clock.nanoTime()));
    }

    /**
     * The time left, but at least {@code floor}: for a last step that must be given a fair chance (a query with a
     * timeout of zero would fail at once, even when the service answers in a millisecond).
     */
    public Duration remaining(Duration floor) {
        Duration left = remaining();
        return left.compareTo(floor) < 0 ? floor : left;
    }
}
