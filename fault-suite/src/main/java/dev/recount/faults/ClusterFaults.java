package dev.recount.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Faults of the local standalone clusters' processes ({@code up --cluster}): Flink TaskManagers and the JobManager
 * killed with kill -9 while `stream --cluster` runs, and a Spark executor while `backfill range --cluster` runs a task.
 */
final class ClusterFaults {
    /** How long both TaskManagers stay down: longer than the job's first restart back-offs, so it waits for slots. */
    private static final Duration ALL_TASKMANAGERS_DOWN = Duration.ofSeconds(15);
    /** How long `stream --cluster` may take to notice its JobManager is gone and exit. */
    private static final Duration JOBMANAGER_LOST_CLIENT_EXIT = Duration.ofMinutes(3);

    private final ClusterControl clusters;

    ClusterFaults(ClusterControl clusters) {
        this.clusters = clusters;
    }

    /** One TaskManager, then both, then the JobManager, each while traffic flows. */
    int killFlinkProcesses(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        return killTaskManager(pipeline, traffic, seen)
                + killEveryTaskManager(pipeline, traffic, seen)
                + killJobManager(pipeline, traffic, seen);
    }
    /**
     * kill -9 of TaskManager 1 while traffic flows, a few seconds after a checkpoint: the JobManager notices, the job
     * fails over onto the other TaskManager (it has slots for the whole job) and resumes from the last checkpoint by
     * itself — nobody restarts anything. Then the TaskManager is started again ({@code up --cluster}).
     */
    private int killTaskManager(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        Checkpoints.awaitNewComplete(pipeline);
        // With the job running, every port of every cluster process is open: none may be beyond loopback.
        List<String> exposed = clusters.listeningBeyondLoopback();
        seen.notes.add("cluster processes listening beyond 127.0.0.1: " + (exposed.isEmpty() ? "none" : exposed));
        Poll.pause(Duration.ofSeconds(3));
        String jobId = clusterJobId(pipeline);
        int failuresBefore = clusters.jobFailures(jobId);
        Instant killed = Instant.now();
        long pid = clusters.killTaskManager(1);
        seen.notes.add(
                "TaskManager 1 (pid " + pid + ") killed " + (traffic.sending() ? "during traffic" : "after traffic"));
        traffic.sendNextPart();
        // The kill must hit the job (its tasks are spread over both TaskManagers): the recovery counts from the kill
        // to the first commit after the JobManager recorded the failure. A commit before that could be one the
        // surviving TaskManager had in flight, a few milliseconds after the kill, and would say nothing of recovery.
        Poll.until(
                Duration.ofMinutes(3),
                "the job to fail over after the kill",
                () -> clusters.jobFailures(jobId) > failuresBefore);
        Instant failedOver = Instant.now();
        // Flink 2.2.1 can take the surviving TaskManager down too: cancelling a task whose input came from the killed
        // one can throw in the task's exception handler ("FATAL - exception in exception handler of task"), which
        // Flink treats as fatal for the whole TaskManager. With none left the job waits for one, as a supervisor
        // (Kubernetes, systemd) would start; here the round does, and says so.
        Poll.until(
                Duration.ofMinutes(3),
                "a stream commit after the failover, or TaskManager 2 gone as well",
                () -> pipeline.lastCommit().filter(t -> t.isAfter(failedOver)).isPresent()
                        || !clusters.taskManagerAlive(2));
        boolean bothLost = !clusters.taskManagerAlive(2);
        if (bothLost) {
            seen.notes.add("TaskManager 2 exited as well (a fatal error in a cancelled task's exception handler);"
                    + " both started again by `up --cluster`, as a supervisor would");
            clusters.up();
        }
        seen.recoveries.add(pipeline.awaitCommitAfter(failedOver, killed, Duration.ofMinutes(3)));
        seen.notes.add("failovers of the job after the kill: " + (clusters.jobFailures(jobId) - failuresBefore));
        if (!bothLost) {
            clusters.up();
            seen.notes.add("TaskManager 1 started again by `up --cluster`");
        }
        return 1;
    }

    /**
     * kill -9 of both TaskManagers at once while traffic flows (a lost node pool, or the fatal error above): the job
     * has no slot left and waits, restarting with back-off, while the JobManager keeps it. The TaskManagers come back
     * after {@link #ALL_TASKMANAGERS_DOWN} ({@code up --cluster}, as a supervisor would start them) and the job must
     * resume from its last checkpoint by itself. The recovery counts from their start to the first commit.
     */
    private int killEveryTaskManager(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        Checkpoints.awaitNewComplete(pipeline);
        String jobId = clusterJobId(pipeline);
        int failuresBefore = clusters.jobFailures(jobId);
        long first = clusters.killTaskManager(1);
        long second = clusters.killTaskManager(2);
        seen.notes.add("both TaskManagers (pids " + first + ", " + second + ") killed "
                + (traffic.sending() ? "during traffic" : "after traffic"));
        traffic.sendNextPart();
        Poll.until(
                Duration.ofMinutes(3),
                "the job to fail after losing every TaskManager",
                () -> clusters.jobFailures(jobId) > failuresBefore);
        Poll.pause(ALL_TASKMANAGERS_DOWN);
        // No TaskManager runs until `up --cluster` starts them: any commit after this instant is the resumed job's.
        Instant restarting = Instant.now();
        clusters.up();
        seen.recoveries.add(pipeline.awaitCommitAfter(restarting, restarting, Duration.ofMinutes(3)));
        seen.notes.add("both TaskManagers started again by `up --cluster` after " + ALL_TASKMANAGERS_DOWN.toSeconds()
                + " s; failures of the job meanwhile: " + (clusters.jobFailures(jobId) - failuresBefore));
        return 1;
    }

    /**
     * kill -9 of the JobManager while traffic flows. There is no high availability on the local cluster (nor in the
     * docker-compose files): the job is gone with it, its TaskManagers' tasks can no longer complete a checkpoint, so
     * nothing of theirs commits. The attached {@code stream --cluster} client must end by itself (a client left
     * hanging would keep on-call waiting for nothing); then, as a user would, {@code up --cluster} starts the
     * JobManager again and {@code stream --cluster} resumes from the last checkpoint. The recovery counts from the
     * kill to the new job's first commit.
     */
    private int killJobManager(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        Checkpoints.awaitNewComplete(pipeline);
        Process client = pipeline.stream();
        Instant killed = Instant.now();
        long pid = clusters.killJobManager();
        seen.notes.add(
                "JobManager (pid " + pid + ") killed " + (traffic.sending() ? "during traffic" : "after traffic"));
        traffic.sendNextPart();
        if (!client.waitFor(JOBMANAGER_LOST_CLIENT_EXIT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("`stream --cluster` still runs " + JOBMANAGER_LOST_CLIENT_EXIT.toSeconds()
                    + " s after its JobManager was killed; see " + pipeline.streamLog());
        }
        seen.notes.add("`stream --cluster` exited " + client.exitValue() + " "
                + Duration.between(killed, Instant.now()).toSeconds() + " s after the JobManager was killed: "
                + Logs.lastLine(pipeline.streamLog()));
        clusters.up();
        // A commit of the old job's tasks landing just after the kill says nothing of recovery: count the new job's.
        Instant resubmitted = Instant.now();
        pipeline.startStream();
        pipeline.awaitRunning();
        seen.recoveries.add(pipeline.awaitCommitAfter(resubmitted, killed, Duration.ofMinutes(5)));
        seen.notes.add("JobManager started again by `up --cluster`, the job by `stream --cluster`");
        return 1;
    }

    /** The id of the job `stream --cluster` submitted, from the line it printed. */
    private static String clusterJobId(Pipeline pipeline) throws IOException {
        Path streamLog = pipeline.streamLog();
        String log = Files.readString(streamLog, StandardCharsets.UTF_8);
        java.util.regex.Matcher job =
                java.util.regex.Pattern.compile("job ([0-9a-f]{32}) running").matcher(log);
        if (!job.find()) throw new IllegalStateException("no job id in " + streamLog);
        return job.group(1);
    }

    /** `backfill range --cluster` with the executor killed (kill -9) while it runs a task; the run must still be exact. */
    int backfillKillingAnExecutor(Pipeline pipeline, Range range, Observations seen) throws Exception {
        Instant since = Instant.now();
        Process backfill = pipeline.startBackfillRange(range.from(), range.to());
        Optional<String> killed = clusters.killExecutorRunningATask(since, backfill::isAlive);
        if (killed.isPresent()) {
            seen.notes.add("killed Spark " + killed.get() + " while it ran a task of the backfill");
            if (!killed.get().matches(".*listening on \\[(127\\.0\\.0\\.1:\\d+(, )?)*]\\)$")) {
                seen.problems.add("the Spark executor listened beyond loopback: " + killed.get());
            }
        } else {
            seen.problems.add("the backfill ended before an executor could be killed");
        }
        if (!backfill.waitFor(Pipeline.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            backfill.destroyForcibly();
            throw new IllegalStateException("backfill --cluster did not finish within " + Pipeline.WAIT);
        }
        return backfill.exitValue();
    }
}
