package dev.recount.stream.run;

import dev.recount.core.time.Wait;
import dev.recount.stream.window.WindowMetricsOperator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
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
        STOPPED,
        /** Cancelled after a stop was asked for (no savepoint possible, or a second Ctrl-C); resumes from the last checkpoint. */
        CANCELLED
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

    /** The job's totals so far (see {@link dev.recount.stream.metrics.JobTotals}); after the end, the final ones. */
    public java.util.Map<String, Object> totals() {
        return finalTotals != null ? finalTotals : client.getAccumulators().join();
    }

    /** Stops the job with a savepoint next to its checkpoints (not drained: open windows stay open). */
    public CompletableFuture<String> stopWithSavepoint() {
        stopRequested = true;
        return client.stopWithSavepoint(false, savepointDirectory, SavepointFormatType.CANONICAL);
    }

    /** Cancels after a stop request (a second Ctrl-C); the checkpoints stay, the next start resumes from the last. */
    public CompletableFuture<Void> cancel() {
        stopRequested = true;
        return client.cancel();
    }

    /**
     * Stops the job with a savepoint, trying again while it is refused (a savepoint needs every task running:
     * right after a start or a restart it is not), for up to {@code patience}; then cancels it, which leaves its
     * checkpoints retained, so the next start resumes from the last one. Returns at once; {@code log} hears how
     * it went.
     */
    public void stopWithSavepointOrCancel(java.time.Duration patience, java.util.function.Consumer<String> log) {
        CompletableFuture.runAsync(() -> {
            AtomicInteger attempts = new AtomicInteger();
            try {
                // Each try ends with null (a savepoint, or the job ended anyway) or why it was not possible yet.
                String notPossible = Wait.upTo(patience)
                        .every(java.time.Duration.ofSeconds(2))
                        .retry(
                                () -> {
                                    attempts.incrementAndGet();
                                    return trySavepoint(log);
                                },
                                Objects::isNull,
                                (why, pause) -> log.accept("savepoint not possible yet (" + why + "); trying again"));
                if (notPossible != null) {
                    log.accept("no savepoint after " + attempts.get() + " attempts (" + notPossible + "); cancelling: "
                            + "the next start resumes from the last checkpoint");
                    cancel();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** One stop with a savepoint: null when it was taken (or the job ended anyway), else why it was not possible. */
    private String trySavepoint(java.util.function.Consumer<String> log) throws InterruptedException {
        try {
            log.accept("savepoint " + stopWithSavepoint().get());
            return null;
        } catch (ExecutionException e) {
            if (client.getJobStatus().join().isTerminalState()) return null;
            return oneLine(e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
        }
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    /**
     * Waits for the job to end.
     *
     * @throws ExecutionException if the job failed or was cancelled
     */
    public Outcome awaitEnd() throws Exception {
        try {
            return finish(client.getJobExecutionResult().get());
        } catch (ExecutionException e) {
            if (stopRequested && client.getJobStatus().join() == org.apache.flink.api.common.JobStatus.CANCELED) {
                return Outcome.CANCELLED;
            }
            throw e;
        }
    }

    /** As {@link #awaitEnd()}, giving up (with a TimeoutException; the job keeps running) after {@code timeout}. */
    public Outcome awaitEnd(java.time.Duration timeout) throws Exception {
        return finish(
                client.getJobExecutionResult().get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    private Outcome finish(JobExecutionResult result) throws Exception {
        finalTotals = result.getAllAccumulatorResults();
        if (stopRequested) return Outcome.STOPPED;
        if (bounded) {
            Object fired = result.getAllAccumulatorResults().get(WindowMetricsOperator.MAX_WINDOW_END_ACCUMULATOR);
            long closedUntil = Math.max(plan.closedUntil(), fired instanceof Long l ? l : Long.MIN_VALUE);
            ledger.recordFinished(jobId(), closedUntil);
        }
        return Outcome.FINISHED;
    }
}
