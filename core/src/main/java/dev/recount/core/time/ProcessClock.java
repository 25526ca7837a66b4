package dev.recount.core.time;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The process's monotonic clock and its pause: what every wait, deadline and progress display reads. Not the wall
 * clock: a deadline must not move when NTP steps the time. Tests pass a {@link Manual} clock, which only moves when
 * the code under test pauses on it (or the test advances it), so a test of "gives up after 2 minutes" takes no time.
 */
public interface ProcessClock {
    /** The JVM's clock: {@link System#nanoTime()}, pauses by sleeping. */
    ProcessClock SYSTEM = new ProcessClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void pause(Duration d) throws InterruptedException {
            if (d.isNegative() || d.isZero()) {
                if (Thread.interrupted()) throw new InterruptedException();
                return;
            }
            TimeUnit.NANOSECONDS.sleep(d.toNanos());
        }
    };

    /** Nanoseconds since an arbitrary origin; only differences mean anything. */
    long nanoTime();

    /** Pauses the calling thread for {@code d} (nothing for zero or less, but an interrupt is still noticed). */
    void pause(Duration d) throws InterruptedException;

    /** A clock that stands still until {@link #advance} or a {@link #pause} moves it: for tests. */
    static Manual manual() {
        return new Manual();
    }

    /** See {@link #manual()}; thread-safe, and a pause returns at once (after moving the clock). */
    final class Manual implements ProcessClock {
        private long nanos;
        private long pauses;

        private Manual() {}

        @Override
        public synchronized long nanoTime() {
            return nanos;
        }

        @Override
        public synchronized void pause(Duration d) throws InterruptedException {
            if (Thread.interrupted()) throw new InterruptedException();
            pauses++;
            if (!d.isNegative()) nanos += d.toNanos();
        }

        /** Moves the clock on by {@code d}, as if that much time had passed. */
        public synchronized void advance(Duration d) {
            nanos += d.toNanos();
        }

        /** How long the clock has run since it was made. */
        public synchronized Duration elapsed() {
            return Duration.ofNanos(nanos);
        }

        /** How many times code paused on this clock. */
        public synchronized long pauses() {
            return pauses;
        }
    }
}
