package dev.recount.stream.run;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a checkpoint as soon as the window operator's watermark has passed a window end of any metric set
 * ({@code stream.checkpoint-on-window-close}), so a window's first firing reaches PostgreSQL about one checkpoint
 * duration after it fired instead of up to a whole checkpoint interval later.
 *
 * <p>Window rows are committed only with a checkpoint (exactly once: what PostgreSQL holds is always the result of a
 * completed checkpoint, which is what a restart resumes from), so their freshness is bounded by when the next
 * checkpoint completes. Checkpointing every second instead would do the same for every window, but at the cost of a
 * full snapshot of the state every second and a lake file per second and subtask; here the extra checkpoints are one
 * per window. They are ordinary checkpoints of the configured kind: nothing about exactly-once changes.
 *
 * <p>Only while the job keeps up with real time (its watermark less than its shortest window behind the wall clock). It
 * polls the job every {@code pollMillis} ({@link Job}: on the local MiniCluster the watermark is read in this JVM,
 * {@link LocalClusterJob}); a poll that fails is ignored (the next one tries again), and a trigger while a checkpoint
 * is running waits for it.
 */
public final class WindowCloseCheckpoints implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WindowCloseCheckpoints.class);

    /** What it needs of the running job. */
    public interface Job {
        /** The window operator's current input watermark (minimum over its subtasks), if it has one yet. */
        OptionalLong windowWatermark() throws Exception;

        /** Asks for a checkpoint (asynchronously). */
        void triggerCheckpoint() throws Exception;
    }

    private final Job job;
    /** The sets' distinct window sizes, ascending. */
    private final long[] windowMillis;

    private final java.util.function.LongSupplier wallClock;
    private final ScheduledExecutorService timer;
    /**
     * Per size: how many window ends lie at or before the watermark (floor((watermark + 1) / size)) at the last poll;
     * Long.MIN_VALUE before the first.
     */
    private final long[] windowsClosed;

    private long triggered;

    /**
     * @param windowMillis the metric sets' window sizes
     * @param wallClock    epoch ms now: a job more than its shortest window behind it (a replay, a backlog) gets no
     *                     extra checkpoints
     */
    public WindowCloseCheckpoints(
            Job job, java.util.Collection<Long> windowMillis, java.util.function.LongSupplier wallClock) {
        this.job = Objects.requireNonNull(job, "job");
        this.wallClock = Objects.requireNonNull(wallClock, "wallClock");
        this.windowMillis = windowMillis.stream()
                .mapToLong(Long::longValue)
                .distinct()
                .sorted()
                .toArray();
        if (this.windowMillis.length == 0 || this.windowMillis[0] <= 0) {
            throw new IllegalArgumentException("window sizes must be positive, got " + windowMillis);
        }
        this.windowsClosed = new long[this.windowMillis.length];
        java.util.Arrays.fill(windowsClosed, Long.MIN_VALUE);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "window-close-checkpoints");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts polling. */
    public WindowCloseCheckpoints start(long pollMillis) {
        timer.scheduleWithFixedDelay(this::pollOnce, pollMillis, pollMillis, TimeUnit.MILLISECONDS);
        return this;
    }

    /** One poll: triggers a checkpoint when a window end was passed since the previous poll. */
    void pollOnce() {
        try {
            OptionalLong watermark = job.windowWatermark();
            // No watermark yet, or the end of input (a --bounded run flushes and checkpoints by itself).
            if (watermark.isEmpty()
                    || watermark.getAsLong() == Long.MIN_VALUE
                    || watermark.getAsLong() == Long.MAX_VALUE) {
                return;
            }
            boolean passedAnEnd = false;
            for (int i = 0; i < windowMillis.length; i++) {
                long closed = Math.floorDiv(watermark.getAsLong() + 1, windowMillis[i]);
                passedAnEnd |= windowsClosed[i] != Long.MIN_VALUE && closed > windowsClosed[i];
                windowsClosed[i] = Math.max(windowsClosed[i], closed);
            }
            // Only a job that keeps up with real time: a replay or a backlog passes window ends every few
            // milliseconds, and its rows are not fresh anyway; the periodic checkpoints carry them.
            if (passedAnEnd && wallClock.getAsLong() - watermark.getAsLong() < windowMillis[0]) {
                job.triggerCheckpoint();
                triggered++;
                LOG.debug("watermark {} passed a window end: checkpoint triggered", watermark.getAsLong());
            }
        } catch (Exception e) {
            LOG.debug("window-close checkpoint poll failed (tried again at the next poll): {}", e.toString());
        }
    }

    /** How many checkpoints it asked for. */
    public long triggered() {
        return triggered;
    }

    /** Stops polling. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
