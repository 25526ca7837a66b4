package dev.recount.faults;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * kill -9 of the whole stream JVM (JobManager, TaskManager, committers: everything) at chosen moments, each time
 * followed by `stream` again, as after a crash a user (or a supervisor) would run it, and the next part of the traffic.
 */
final class StreamKills {
    /** The moment a kill aims at. */
    enum KillPoint {
        DURING_TRAFFIC,
        DURING_CHECKPOINT,
        RIGHT_AFTER_CHECKPOINT,
        WHILE_CATCHING_UP
    }

    /** KILL_STREAM's plan: five kills spread over the traffic. */
    static final List<KillPoint> FIVE = List.of(
            KillPoint.DURING_TRAFFIC,
            KillPoint.DURING_CHECKPOINT,
            KillPoint.RIGHT_AFTER_CHECKPOINT,
            KillPoint.WHILE_CATCHING_UP,
            KillPoint.DURING_TRAFFIC);

    private StreamKills() {}

    /** One kill -9 per point of {@code plan}; the recovery of each: from the kill to the restarted job's commit. */
    static int kill(Pipeline pipeline, List<KillPoint> plan, Traffic traffic, Observations seen) throws Exception {
        Instant lastRestart = Instant.now();
        for (KillPoint point : plan) {
            String reached = switch (point) {
                case DURING_TRAFFIC -> {
                    Poll.pause(Duration.ofSeconds(4));
                    yield traffic.sending() ? "during traffic" : "after traffic, while the job works through it";
                }
                case DURING_CHECKPOINT ->
                    Checkpoints.awaitInProgress(pipeline)
                            ? "during a checkpoint"
                            : "during traffic (no checkpoint caught in progress)";
                case RIGHT_AFTER_CHECKPOINT -> {
                    Checkpoints.awaitNewComplete(pipeline);
                    yield "right after a checkpoint completed";
                }
                case WHILE_CATCHING_UP -> {
                    Poll.pause(Duration.between(Instant.now(), lastRestart.plusSeconds(3)));
                    yield "while catching up, 3 s after a restart";
                }
            };
            Instant killed = Instant.now();
            pipeline.killStream();
            seen.notes.add("kill " + (seen.recoveries.size() + 1) + ": " + reached);
            lastRestart = Instant.now();
            pipeline.startStream();
            pipeline.awaitRunning();
            traffic.sendNextPart();
            seen.recoveries.add(pipeline.awaitCommitAfter(lastRestart, killed, Duration.ofMinutes(3)));
        }
        return plan.size();
    }

    /**
     * kill -9 right after a checkpoint, restarted only after the Kafka transaction timeout (shortened to 5 s) has
     * passed twice over, twice per round: the transactions the dead job left open have been aborted by the broker.
     */
    static int restartAfterTransactionTimeout(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        for (int i = 0; i < 2; i++) {
            Checkpoints.awaitNewComplete(pipeline);
            Instant killed = Instant.now();
            pipeline.killStream();
            Poll.pause(Duration.ofSeconds(12)); // > 2 x the 5 s transaction timeout
            seen.notes.add("restart " + (i + 1) + " after 12 s, transaction timeout 5 s");
            Instant restarted = Instant.now();
            pipeline.startStream();
            pipeline.awaitRunning();
            traffic.sendNextPart();
            seen.recoveries.add(pipeline.awaitCommitAfter(restarted, killed, Duration.ofMinutes(3)));
        }
        return 2;
    }
}
