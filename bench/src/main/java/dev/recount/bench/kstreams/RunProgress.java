package dev.recount.bench.kstreams;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * How far a run has come through the topology, stage by stage, so the bench knows when the whole topic has been
 * consumed and every window result is in PostgreSQL (Kafka Streams has no bounded mode: the job would wait for more
 * input forever). A stage is done when it has read everything the stage before it forwarded, once that stage is
 * done:
 *
 * <ol>
 *   <li>validate: {@link #read} reached the records in the topic,</li>
 *   <li>de-duplicate: {@link #idsLookedUp} reached {@link #valid},</li>
 *   <li>aggregate: {@link #aggregated} reached {@link #unique},</li>
 *   <li>upsert: every upsert task has asked for a commit (which flushes the window store's cache into it) and then
 *       written all it held ({@link #upsertTasksDrained} = {@link #upsertTasksOpen}).</li>
 * </ol>
 *
 * <p>Counting holds while no task is re-processed, i.e. without a rebalance after the start; the bench reports
 * rebalances so a run with one can be discarded.
 */
public final class RunProgress {
    private final long recordsInTopic;
    final LongAdder read = new LongAdder();
    final LongAdder valid = new LongAdder();
    final LongAdder idsLookedUp = new LongAdder();
    final LongAdder unique = new LongAdder();
    final LongAdder aggregated = new LongAdder();
    final AtomicInteger upsertTasksOpen = new AtomicInteger();
    final AtomicInteger upsertTasksDrained = new AtomicInteger();
    final LongAdder rowsUpserted = new LongAdder();
    private volatile boolean drainRequested;

    public RunProgress(long recordsInTopic) {
        if (recordsInTopic < 0)
            throw new IllegalArgumentException("recordsInTopic must be >= 0, got " + recordsInTopic);
        this.recordsInTopic = recordsInTopic;
    }

    /** Every aggregation input has been aggregated: the upsert tasks may drain (see {@link #drainRequested()}). */
    public boolean aggregationDone() {
        if (read.sum() < recordsInTopic) return false;
        long validEvents = valid.sum();
        if (idsLookedUp.sum() < validEvents) return false;
        return aggregated.sum() >= unique.sum();
    }

    /** Called by the bench once {@link #aggregationDone()}; the upsert tasks then flush the cache and themselves. */
    public void requestDrain() {
        drainRequested = true;
    }

    boolean drainRequested() {
        return drainRequested;
    }

    /** Every window result is written. */
    public boolean drained() {
        int open = upsertTasksOpen.get();
        return drainRequested && open > 0 && upsertTasksDrained.get() >= open;
    }

    public String summary() {
        return String.format(
                java.util.Locale.ROOT,
                "read %,d, valid %,d, duplicates dropped %,d, unique %,d, aggregated %,d, rows upserted %,d",
                read.sum(),
                valid.sum(),
                idsLookedUp.sum() - unique.sum(),
                unique.sum(),
                aggregated.sum(),
                rowsUpserted.sum());
    }

    public long invalid() {
        return read.sum() - valid.sum();
    }

    public long unique() {
        return unique.sum();
    }
}
