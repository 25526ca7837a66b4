package dev.recount.reconcile;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Progress as plain lines, for logs and pipes: {@code reconcile: writing the report, 12,000 of 20,158 rows (55 s)}.
 * At most one line every {@code every}, and none at all for a run shorter than that, so a scheduler's log of quick
 * runs is unchanged. A heartbeat thread repeats the current step while one long statement runs (the comparison of a
 * day is a single SQL statement that reports nothing until it ends).
 */
final class ProgressLines implements RunProgress {
    /** "At most one line every few seconds." */
    static final Duration EVERY = Duration.ofSeconds(5);

    private final PrintWriter out;
    private final long everyNanos;
    private final LongSupplier nanoTime;
    private final long startNanos;
    private final ScheduledExecutorService heartbeat;
    private long lastPrintNanos;
    private String stage = "starting";
    private long done = -1;
    private long total = -1;
    private boolean closed;

    /** Lines without a heartbeat, on {@code nanoTime}'s clock: tests drive it with {@link #tick()}. */
    ProgressLines(PrintWriter out, Duration every, LongSupplier nanoTime) {
        this(out, every, nanoTime, null);
    }

    private ProgressLines(PrintWriter out, Duration every, LongSupplier nanoTime, ScheduledExecutorService heartbeat) {
        if (every.isNegative() || every.isZero())
            throw new IllegalArgumentException("every must be positive, got " + every);
        this.out = out;
        this.everyNanos = every.toNanos();
        this.nanoTime = nanoTime;
        this.startNanos = nanoTime.getAsLong();
        this.lastPrintNanos = startNanos;
        this.heartbeat = heartbeat;
    }

    /** Lines on {@code out}, with a daemon heartbeat checking once a second whether a line is due. */
    static ProgressLines start(PrintWriter out, Duration every) {
        ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "reconcile-progress");
            t.setDaemon(true);
            return t;
        });
        ProgressLines lines = new ProgressLines(out, every, System::nanoTime, heartbeat);
        heartbeat.scheduleAtFixedRate(lines::tick, 1, 1, TimeUnit.SECONDS);
        return lines;
    }

    @Override
    public synchronized void stage(String name) {
        stage = name;
        done = -1;
        total = -1;
        tick();
    }

    @Override
    public synchronized void rows(long done, long total) {
        this.done = done;
        this.total = total;
        tick();
    }

    /** Prints the current step if the last line (or the start) is at least {@code every} ago. */
    synchronized void tick() {
        long now = nanoTime.getAsLong();
        if (closed || now - lastPrintNanos < everyNanos) return;
        lastPrintNanos = now;
        String count = done < 0 ? "" : String.format(Locale.ROOT, ", %,d of %,d rows", done, total);
        out.println(
                "reconcile: " + stage + count + " (" + RunProgress.elapsed(Duration.ofNanos(now - startNanos)) + ")");
        out.flush();
    }

    /** After this, no line is printed: the command's own output (or error) follows alone. */
    @Override
    public synchronized void close() {
        closed = true;
        if (heartbeat != null) heartbeat.shutdownNow();
    }
}
