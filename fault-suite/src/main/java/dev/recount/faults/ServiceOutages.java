package dev.recount.faults;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The stack's services taken away while the job runs: the Kafka broker restarted, PostgreSQL stopped or frozen. */
final class ServiceOutages {
    private final StackControl control;

    ServiceOutages(StackControl control) {
        this.control = control;
    }

    /**
     * The broker stopped for 15 s and started again, once while produce runs (produce stops, is run again and
     * continues after its last committed line) and once while only the job runs.
     */
    int restartBroker(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        Poll.pause(Duration.ofSeconds(5));
        Instant stopped = Instant.now();
        control.stopBroker();
        Poll.pause(Duration.ofSeconds(15));
        control.startMissing();
        Instant back = Instant.now();
        Process produce = traffic.produce();
        if (!produce.waitFor(3, TimeUnit.MINUTES))
            throw new IllegalStateException("produce hangs after the broker restart");
        seen.notes.add("produce during the outage exited " + produce.exitValue() + ": "
                + Logs.lastLine(pipeline.log("produce")));
        // produce stopped (or not); its rerun continues after the last committed line, then the job must commit.
        traffic.finish();
        seen.recoveries.add(pipeline.awaitCommitAfter(back, stopped, Duration.ofMinutes(5)));

        Instant stoppedAgain = Instant.now();
        control.stopBroker();
        Poll.pause(Duration.ofSeconds(15));
        control.startMissing();
        seen.recoveries.add(pipeline.awaitCommitAfter(Instant.now(), stoppedAgain, Duration.ofMinutes(5)));
        return 2;
    }

    /** PostgreSQL stopped (fast shutdown) for 30 s. */
    int stopPostgres(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        return postgresAway(
                pipeline,
                traffic,
                Duration.ofSeconds(30),
                () -> {
                    control.stopPostgres();
                    return control::startMissing;
                },
                seen);
    }

    /** PostgreSQL frozen (SIGSTOP of every process) for 60 s. */
    int freezePostgres(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        return postgresAway(
                pipeline,
                traffic,
                Duration.ofSeconds(60),
                () -> {
                    List<Long> frozen = control.freezePostgres();
                    return () -> StackControl.thaw(frozen);
                },
                seen);
    }

    /**
     * PostgreSQL away for {@code length} while traffic flows: the first half of the traffic is sent and the job has
     * committed (its sink is connected), then {@code takeAway} takes PostgreSQL away and the second half is sent during
     * the outage; the action it returns brings PostgreSQL back, also when the round fails meanwhile. An outage after
     * the traffic had ended would test nothing but the round's patience (see {@link Traffic}).
     */
    private int postgresAway(
            Pipeline pipeline, Traffic traffic, Duration length, Supplier<Runnable> takeAway, Observations seen)
            throws Exception {
        Instant since = Instant.now();
        traffic.awaitSent();
        pipeline.awaitCommitAfter(since, since, Duration.ofMinutes(2));
        Instant away = Instant.now();
        Runnable bringBack = takeAway.get();
        try {
            traffic.sendNextPart();
            Poll.pause(length);
        } finally {
            bringBack.run();
        }
        Instant back = Instant.now();
        traffic.finish();
        seen.recoveries.add(pipeline.awaitCommitAfter(back, away, Duration.ofMinutes(5)));
        return 1;
    }
}
