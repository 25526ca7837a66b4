package dev.recount.stream.run;

import java.net.ConnectException;
import java.net.URI;
import java.util.Optional;

/**
 * What an attached {@code stream --cluster} says when its Flink JobManager stops answering. Without JobManager high
 * availability the job ends with the JobManager; Flink's client gives up after its REST retries (about a minute) with
 * only "ConnectException: Connection refused", which tells on-call neither that the job is gone nor how it comes
 * back. Nothing is lost: a job commits only when a checkpoint completes, which needs the JobManager, and the next
 * start resumes from the newest retained checkpoint.
 */
public final class JobManagerLost {
    private JobManagerLost() {}

    /** The connection failure in {@code failure}'s cause chain, if the client could not reach the JobManager. */
    public static Optional<ConnectException> cause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConnectException c) return Optional.of(c);
        }
        return Optional.empty();
    }

    /** The error for job {@code jobId}, whose checkpoints are retained in {@code checkpointDir}. */
    public static IllegalStateException error(String jobId, URI checkpointDir, ConnectException cause) {
        return new IllegalStateException(
                "lost the Flink JobManager while job " + jobId + " ran ("
                        + cause.getClass().getSimpleName() + ": "
                        + cause.getMessage() + "); without JobManager high availability the job ended with it, and "
                        + "nothing after its last completed checkpoint was committed. Start the JobManager again "
                        + "(locally `./recount up --cluster`), then run `./recount stream --cluster`: it resumes from "
                        + "the newest checkpoint in " + checkpointDir,
                cause);
    }
}
