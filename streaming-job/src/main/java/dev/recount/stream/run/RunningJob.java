package dev.recount.stream.run;

import dev.recount.stream.window.RevisionedWindowFunction;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;

/** A submitted run: stop it with a savepoint, or wait for its end (which is also recorded in its run record). */
public final class RunningJob {
    public enum Outcome {
        /** A --bounded run reached its stopping offsets and flushed every window. */
        FINISHED,
        /** Stopped with a savepoint (SIGTERM / Ctrl-C); the next start resumes from it. */
        STOPPED
    }

    private final JobClient client;
    private final RunLedger ledger;
    private final ResumePlan plan;
    private final boolean bounded;
    private final String savepointDirectory;
    private volatile boolean stopRequested;
    private volatile java.util.Map<String, Object> finalTotals;

    RunningJob(JobClient client, RunLedger ledger, ResumePlan plan, boolean bounded, String savepointDirectory) {
        this.client = client;
        this.ledger = ledger;
        this.plan = plan;
        this.bounded = bounded;
        this.savepointDirectory = savepointDirectory;
    }

    public JobID jobId() {
        return client.getJobID();
    }

    public JobClient client() {
        return client;
    }

    public ResumePlan plan() {
        return plan;
    }

    /** The job's totals so far (see {@link dev.recount.stream.JobTotals}); after the end, the final ones. */
    public java.util.Map<String, Object> totals() {
        return finalTotals != null ? finalTotals : client.getAccumulators().join();
    }

    /** Stops the job with a savepoint next to its checkpoints (not drained: open windows stay open). */
    public CompletableFuture<String> stopWithSavepoint() {
        stopRequested = true;
        return client.stopWithSavepoint(false, savepointDirectory, SavepointFormatType.CANONICAL);
    }

    /**
     * Waits for the job to end.
     *
     * @throws ExecutionException if the job failed or was cancelled
     */
    public Outcome awaitEnd() throws Exception {
        return finish(client.getJobExecutionResult().get());
    }

    /** As {@link #awaitEnd()}, giving up (with a TimeoutException; the job keeps running) after {@code timeout}. */
    public Outcome awaitEnd(java.time.Duration timeout) throws Exception {
        return finish(client.getJobExecutionResult().get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    private Outcome finish(JobExecutionResult result) throws Exception {
        finalTotals = result.getAllAccumulatorResults();
        if (stopRequested) return Outcome.STOPPED;
        if (bounded) {
            Object fired = result.getAllAccumulatorResults().get(RevisionedWindowFunction.MAX_WINDOW_END_ACCUMULATOR);
            long closedUntil = Math.max(plan.closedUntil(), fired instanceof Long l ? l : Long.MIN_VALUE);
            ledger.recordFinished(jobId(), closedUntil);
        }
        return Outcome.FINISHED;
    }
}
