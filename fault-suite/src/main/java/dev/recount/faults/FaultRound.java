package dev.recount.faults;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.Poll;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One round: a fresh pipeline, generated traffic sent by `produce` while `stream` runs, one kind of fault injected
 * (some several times, at different moments), then the job drained, every output checked against the truth,
 * `backfill range` and `reconcile` run, and the served numbers checked against the truth.
 */
final class FaultRound {
    /** The event-time settings of the pipelines: short, so windows close and re-fire within the round. */
    static final Map<String, String> SETTINGS = Map.of(
            "window.size", "1m",
            "watermark.out-of-orderness", "5s",
            "window.allowed-lateness", "30s",
            "watermark.idleness", "10s",
            "stream.parallelism", "2",
            "stream.checkpoint-interval", "2s");

    private final LocalStack stack;
    private final StackControl control;
    private final Path dir;
    private final long events;
    private final double rate;
    private final long seed;
    private final Consumer<String> log;

    FaultRound(LocalStack stack, Path dir, long events, double rate, long seed, Consumer<String> log) {
        this.stack = stack;
        this.dir = dir;
        this.events = events;
        this.rate = rate;
        this.seed = seed;
        this.log = log;
        this.control = new StackControl(
                stack, new Launcher(Launcher.repositoryRoot(), stack.environment()), dir.resolve("stack-control.log"));
    }

    RoundResult run(Fault fault) throws Exception {
        long started = System.nanoTime();
        Map<String, String> settings = new HashMap<>(SETTINGS);
        if (fault == Fault.RESTART_AFTER_TRANSACTION_TIMEOUT) settings.put("stream.kafka-transaction-timeout", "5s");
        ClusterControl clusters = null;
        Pipeline pipeline;
        if (fault == Fault.CLUSTER_PROCESSES_KILLED) {
            clusters = new ClusterControl(
                    stack, new Launcher(Launcher.repositoryRoot(), stack.environment()), dir.resolve("clusters.log"));
            pipeline = Pipeline.onClusters(dir, stack, settings, clusters.up(), clusters::taskManagerLogs);
        } else {
            pipeline = Pipeline.create(dir, stack, settings);
        }
        try {
            return run(fault, pipeline, clusters, started);
        } catch (Exception | Error e) {
            keepEvidence(fault, pipeline, e);
            int killed = pipeline.killRunning();
            if (killed > 0) log.accept(fault + ": killed " + killed + " command(s) the failed round left running");
            throw e;
        } finally {
            if (clusters != null) clusters.down();
        }
    }

    /** Lines of each log a failed round prints: enough for the failure's last steps, not a whole run. */
    private static final int TAIL_LINES = 60;
    /** How long both TaskManagers stay down: longer than the job's first restart back-offs, so it waits for slots. */
    private static final Duration ALL_TASKMANAGERS_DOWN = Duration.ofSeconds(15);
    /** How long `stream --cluster` may take to notice its JobManager is gone and exit. */
    private static final Duration JOBMANAGER_LOST_CLIENT_EXIT = Duration.ofMinutes(3);

    /**
     * A round that failed (a timeout, an exception) keeps what explains it before the clusters go down and the stack's
     * temporary home is deleted: the stack's Flink and Spark logs are copied into the round's directory, and the end
     * of the newest stream log and of the JobManager's and TaskManagers' logs (a round on the clusters) is printed, so
     * that a failure in CI, whose directories are gone afterwards, can be read from its output.
     */
    private void keepEvidence(Fault fault, Pipeline pipeline, Throwable failure) {
        Path kept = dir.resolve("stack-logs");
        List<Path> tails = new ArrayList<>();
        if (pipeline.streamStarts() > 0) tails.add(pipeline.log("stream-" + pipeline.streamStarts()));
        try (var files = Files.list(stack.home().resolve("logs"))) {
            Files.createDirectories(kept);
            for (Path f : files.filter(f -> f.getFileName().toString().matches("(flink|spark)-.*"))
                    .sorted()
                    .toList()) {
                Path copy = kept.resolve(f.getFileName());
                Files.copy(f, copy, StandardCopyOption.REPLACE_EXISTING);
                if (copy.getFileName().toString().matches("flink-(jobmanager|taskmanager-\\d+)\\.log")) tails.add(copy);
            }
        } catch (IOException e) {
            log.accept(fault + ": could not keep the stack's logs: " + e.getMessage());
        }
        log.accept(fault + " failed (" + failure + "); the stack's Flink and Spark logs are kept in " + kept);
        for (Path f : tails) {
            log.accept("---- the end of " + f);
            log.accept(lastLines(f, TAIL_LINES));
        }
    }

    private RoundResult run(Fault fault, Pipeline pipeline, ClusterControl clusters, long started) throws Exception {
        EventTimeSettings time = RecountConfig.load(pipeline.config, Map.of()).eventTime();
        Instant now = Instant.now();
        Scenario scenario = Scenario.generate(dir, events, Duration.ofMinutes(6), seed, time, 3, now);
        PoisonCorpus poison = null;
        if (fault == Fault.POISON_CORPUS) {
            poison = new PoisonCorpus(
                    scenario.from()
                            .plus(Duration.between(scenario.from(), scenario.to())
                                    .dividedBy(2)),
                    now);
            scenario = scenario.with(poison.lines(), poison.direct(), now, time);
        }
        log.accept(fault + ": " + scenario.events().size() + " events, " + scenario.invalidTotal()
                + " invalid records, " + "windows [" + scenario.from() + ", " + scenario.to() + ") in " + dir);

        List<Duration> recoveries = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        pipeline.startStream();
        awaitRunning(pipeline);
        Traffic traffic = Traffic.start(pipeline, scenario.file(), trafficParts(fault), rate);

        int injections = switch (fault) {
            case KILL_STREAM_ONCE ->
                kill(pipeline, new KillPoint[] {KillPoint.RIGHT_AFTER_CHECKPOINT}, traffic, recoveries, notes);
            case KILL_STREAM ->
                kill(
                        pipeline,
                        new KillPoint[] {
                            KillPoint.DURING_TRAFFIC,
                            KillPoint.DURING_CHECKPOINT,
                            KillPoint.RIGHT_AFTER_CHECKPOINT,
                            KillPoint.WHILE_CATCHING_UP,
                            KillPoint.DURING_TRAFFIC
                        },
                        traffic,
                        recoveries,
                        notes);
            case RESTART_AFTER_TRANSACTION_TIMEOUT -> restartAfterTimeout(pipeline, traffic, recoveries, notes);
            case BROKER_RESTART -> restartBroker(pipeline, traffic, recoveries, notes);
            case POSTGRES_STOPPED ->
                postgresAway(
                        pipeline,
                        traffic,
                        Duration.ofSeconds(30),
                        () -> {
                            control.stopPostgres();
                            return control::startMissing;
                        },
                        recoveries);
            case POSTGRES_FROZEN ->
                postgresAway(
                        pipeline,
                        traffic,
                        Duration.ofSeconds(60),
                        () -> {
                            List<Long> frozen = control.freezePostgres();
                            return () -> StackControl.thaw(frozen);
                        },
                        recoveries);
            case CHECKPOINT_DELETED -> damageNewestCheckpoint(pipeline, true, recoveries, notes);
            case CHECKPOINT_CORRUPTED -> damageNewestCheckpoint(pipeline, false, recoveries, notes);
            case POISON_CORPUS -> sendDirect(pipeline, poison.direct());
            case RECONCILE_KILLED -> 0; // after the drain, below
            case CLUSTER_PROCESSES_KILLED ->
                killTaskManager(pipeline, clusters, traffic, recoveries, notes)
                        + killEveryTaskManager(pipeline, clusters, traffic, recoveries, notes)
                        + killJobManager(pipeline, clusters, traffic, recoveries, notes);
        };
        traffic.finish();
        List<String> problems = new ArrayList<>();
        if (fault == Fault.POISON_CORPUS) {
            // The job has read everything once the drain below starts; failures of the running job count now.
            Poll.until(
                    Duration.ofMinutes(3),
                    "the stream job to commit after the traffic",
                    () -> pipeline.lastCommit()
                            .map(t -> t.isAfter(Instant.now().minusSeconds(3)))
                            .orElse(false));
            int failures = pipeline.failuresOfRunningJob();
            notes.add("failures of the running job during the corpus: " + failures);
            if (failures != 0) problems.add("the job failed " + failures + " time(s) during the poison corpus");
        }

        pipeline.stopStream();
        int drained = pipeline.drain();
        if (drained != 0)
            throw new IllegalStateException(
                    "stream --bounded exited " + drained + "; see " + pipeline.log("stream-drain"));
        Accounting accounting = new Accounting(pipeline, scenario, stack.bootstrapServers(), time.windows());
        Accounting.Result streamResult = accounting.checkStream();
        if (fault == Fault.POISON_CORPUS) {
            // A producer clock 50 minutes ahead must not have moved the watermark ahead of the wall clock: every
            // too-late decision was taken with a watermark behind the clock.
            long bound = Instant.now().toEpochMilli();
            for (var r : accounting.readCommitted(pipeline.backfill)) {
                var b = dev.recount.core.event.BackfillRecord.fromJson(r.value());
                if (b.watermark() > bound) {
                    problems.add("event " + b.event().eventId + " judged too late at watermark "
                            + Instant.ofEpochMilli(b.watermark()) + ", ahead of the clock");
                    break;
                }
            }
        }

        int backfilled = fault == Fault.CLUSTER_PROCESSES_KILLED
                ? backfillKillingAnExecutor(pipeline, clusters, scenario, notes, problems)
                : pipeline.backfillRange(scenario.from(), scenario.to());
        if (backfilled != 0)
            throw new IllegalStateException(
                    "backfill range exited " + backfilled + "; see " + pipeline.log("backfill"));
        List<String> finalExamples = new ArrayList<>(streamResult.examples());
        if (fault == Fault.RECONCILE_KILLED)
            injections = killReconcile(pipeline, scenario, recoveries, notes, problems);
        int reconciled = pipeline.reconcile(scenario.from(), scenario.to());
        if (reconciled != 0 && reconciled != 3) {
            throw new IllegalStateException("reconcile exited " + reconciled + "; see " + pipeline.log("reconcile"));
        }
        long wrong = accounting.finalKeysWrong(finalExamples);
        Accounting.Result result = new Accounting.Result(
                streamResult.eventsLost(),
                streamResult.eventsDoubled(),
                streamResult.backfillDuplicates(),
                streamResult.backfillUnknown(),
                streamResult.deadLettersLost(),
                streamResult.deadLettersExtra(),
                streamResult.lakeMissing(),
                streamResult.lakeDuplicates(),
                wrong,
                concat(streamResult.problems(), problems),
                finalExamples,
                streamResult.seen());
        RoundResult round = new RoundResult(
                fault, injections, recoveries, result, notes, Duration.ofNanos(System.nanoTime() - started));
        log.accept(fault + ": " + (round.passed() ? "exact" : "NOT EXACT") + " — " + result + "; recoveries "
                + recoveries + (notes.isEmpty() ? "" : "; " + String.join("; ", notes)));
        return round;
    }

    private void awaitRunning(Pipeline pipeline) {
        Path logFile = pipeline.log("stream-" + pipeline.streamStarts());
        Poll.until(Duration.ofMinutes(3), "the stream job to run (" + logFile + ")", () -> {
            if (!pipeline.stream().isAlive()) {
                throw new IllegalStateException(
                        "the stream job exited " + pipeline.stream().exitValue() + ": " + lastLines(logFile));
            }
            return Files.exists(logFile) && Files.readString(logFile).contains(" running");
        });
    }

    // --- kill -9 of the whole stream JVM -----------------------------------------------------------------------

    private enum KillPoint {
        DURING_TRAFFIC,
        DURING_CHECKPOINT,
        RIGHT_AFTER_CHECKPOINT,
        WHILE_CATCHING_UP
    }

    private int kill(
            Pipeline pipeline, KillPoint[] plan, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        Instant lastRestart = Instant.now();
        for (KillPoint point : plan) {
            String reached = switch (point) {
                case DURING_TRAFFIC -> {
                    pause(Duration.ofSeconds(4));
                    yield traffic.sending() ? "during traffic" : "after traffic, while the job works through it";
                }
                case DURING_CHECKPOINT ->
                    awaitCheckpointInProgress(pipeline)
                            ? "during a checkpoint"
                            : "during traffic (no checkpoint caught in progress)";
                case RIGHT_AFTER_CHECKPOINT -> {
                    awaitNewCompleteCheckpoint(pipeline);
                    yield "right after a checkpoint completed";
                }
                case WHILE_CATCHING_UP -> {
                    pause(Duration.between(Instant.now(), lastRestart.plusSeconds(3)));
                    yield "while catching up, 3 s after a restart";
                }
            };
            Instant killed = Instant.now();
            pipeline.killStream();
            notes.add("kill " + (recoveries.size() + 1) + ": " + reached);
            lastRestart = Instant.now();
            pipeline.startStream();
            awaitRunning(pipeline);
            traffic.sendNextPart();
            recoveries.add(pipeline.awaitCommitAfter(lastRestart, killed, Duration.ofMinutes(3)));
        }
        return plan.length;
    }

    private boolean awaitCheckpointInProgress(Pipeline pipeline) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            for (Path chk : pipeline.checkpointDirs()) {
                if (!Files.exists(chk.resolve("_metadata"))) return true;
            }
            LockSupport.parkNanos(Duration.ofMillis(2).toNanos()); // watching for a short-lived state, not waiting
        }
        return false;
    }

    private void awaitNewCompleteCheckpoint(Pipeline pipeline) throws IOException {
        Optional<Path> before = newestComplete(pipeline);
        Poll.until(Duration.ofMinutes(2), "a new complete checkpoint", () -> {
            Optional<Path> now = newestComplete(pipeline);
            return now.isPresent() && !now.equals(before);
        });
    }

    private static Optional<Path> newestComplete(Pipeline pipeline) throws IOException {
        return pipeline.checkpointDirs().stream()
                .filter(p -> Files.exists(p.resolve("_metadata")))
                .max(Comparator.comparingLong(FaultRound::modified));
    }

    private static long modified(Path chk) {
        try {
            return Files.getLastModifiedTime(chk.resolve("_metadata")).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }

    private int restartAfterTimeout(Pipeline pipeline, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        for (int i = 0; i < 2; i++) {
            awaitNewCompleteCheckpoint(pipeline);
            Instant killed = Instant.now();
            pipeline.killStream();
            pause(Duration.ofSeconds(12)); // > 2 x the 5 s transaction timeout
            notes.add("restart " + (i + 1) + " after 12 s, transaction timeout 5 s");
            Instant restarted = Instant.now();
            pipeline.startStream();
            awaitRunning(pipeline);
            traffic.sendNextPart();
            recoveries.add(pipeline.awaitCommitAfter(restarted, killed, Duration.ofMinutes(3)));
        }
        return 2;
    }

    // --- the standalone clusters -------------------------------------------------------------------------------

    /**
     * kill -9 of TaskManager 1 while traffic flows, a few seconds after a checkpoint: the JobManager notices, the job
     * fails over onto the other TaskManager (it has slots for the whole job) and resumes from the last checkpoint by
     * itself — nobody restarts anything. Then the TaskManager is started again ({@code up --cluster}).
     */
    private int killTaskManager(
            Pipeline pipeline, ClusterControl clusters, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        awaitNewCompleteCheckpoint(pipeline);
        // With the job running, every port of every cluster process is open: none may be beyond loopback.
        List<String> exposed = clusters.listeningBeyondLoopback();
        notes.add("cluster processes listening beyond 127.0.0.1: " + (exposed.isEmpty() ? "none" : exposed));
        pause(Duration.ofSeconds(3));
        String jobId = clusterJobId(pipeline);
        int failuresBefore = clusters.jobFailures(jobId);
        Instant killed = Instant.now();
        long pid = clusters.killTaskManager(1);
        notes.add("TaskManager 1 (pid " + pid + ") killed " + (traffic.sending() ? "during traffic" : "after traffic"));
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
            notes.add("TaskManager 2 exited as well (a fatal error in a cancelled task's exception handler);"
                    + " both started again by `up --cluster`, as a supervisor would");
            clusters.up();
        }
        recoveries.add(pipeline.awaitCommitAfter(failedOver, killed, Duration.ofMinutes(3)));
        notes.add("failovers of the job after the kill: " + (clusters.jobFailures(jobId) - failuresBefore));
        if (!bothLost) {
            clusters.up();
            notes.add("TaskManager 1 started again by `up --cluster`");
        }
        return 1;
    }

    /**
     * kill -9 of both TaskManagers at once while traffic flows (a lost node pool, or the fatal error above): the job
     * has no slot left and waits, restarting with back-off, while the JobManager keeps it. The TaskManagers come back
     * after {@link #ALL_TASKMANAGERS_DOWN} ({@code up --cluster}, as a supervisor would start them) and the job must
     * resume from its last checkpoint by itself. The recovery counts from their start to the first commit.
     */
    private int killEveryTaskManager(
            Pipeline pipeline, ClusterControl clusters, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        awaitNewCompleteCheckpoint(pipeline);
        String jobId = clusterJobId(pipeline);
        int failuresBefore = clusters.jobFailures(jobId);
        long first = clusters.killTaskManager(1);
        long second = clusters.killTaskManager(2);
        notes.add("both TaskManagers (pids " + first + ", " + second + ") killed "
                + (traffic.sending() ? "during traffic" : "after traffic"));
        traffic.sendNextPart();
        Poll.until(
                Duration.ofMinutes(3),
                "the job to fail after losing every TaskManager",
                () -> clusters.jobFailures(jobId) > failuresBefore);
        pause(ALL_TASKMANAGERS_DOWN);
        // No TaskManager runs until `up --cluster` starts them: any commit after this instant is the resumed job's.
        Instant restarting = Instant.now();
        clusters.up();
        recoveries.add(pipeline.awaitCommitAfter(restarting, restarting, Duration.ofMinutes(3)));
        notes.add("both TaskManagers started again by `up --cluster` after " + ALL_TASKMANAGERS_DOWN.toSeconds()
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
    private int killJobManager(
            Pipeline pipeline, ClusterControl clusters, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        awaitNewCompleteCheckpoint(pipeline);
        Process client = pipeline.stream();
        Instant killed = Instant.now();
        long pid = clusters.killJobManager();
        notes.add("JobManager (pid " + pid + ") killed " + (traffic.sending() ? "during traffic" : "after traffic"));
        traffic.sendNextPart();
        if (!client.waitFor(JOBMANAGER_LOST_CLIENT_EXIT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("`stream --cluster` still runs " + JOBMANAGER_LOST_CLIENT_EXIT.toSeconds()
                    + " s after its JobManager was killed; see " + pipeline.log("stream-" + pipeline.streamStarts()));
        }
        notes.add("`stream --cluster` exited " + client.exitValue() + " "
                + Duration.between(killed, Instant.now()).toSeconds() + " s after the JobManager was killed: "
                + lastLine(lastLines(pipeline.log("stream-" + pipeline.streamStarts()))));
        clusters.up();
        // A commit of the old job's tasks landing just after the kill says nothing of recovery: count the new job's.
        Instant resubmitted = Instant.now();
        pipeline.startStream();
        awaitRunning(pipeline);
        recoveries.add(pipeline.awaitCommitAfter(resubmitted, killed, Duration.ofMinutes(5)));
        notes.add("JobManager started again by `up --cluster`, the job by `stream --cluster`");
        return 1;
    }

    /** The id of the job `stream --cluster` submitted, from the line it printed. */
    private static String clusterJobId(Pipeline pipeline) throws IOException {
        Path streamLog = pipeline.log("stream-" + pipeline.streamStarts());
        String log = Files.readString(streamLog, StandardCharsets.UTF_8);
        java.util.regex.Matcher job =
                java.util.regex.Pattern.compile("job ([0-9a-f]{32}) running").matcher(log);
        if (!job.find()) throw new IllegalStateException("no job id in " + streamLog);
        return job.group(1);
    }

    /** `backfill range --cluster` with the executor killed (kill -9) while it runs a task; the run must still be exact. */
    private int backfillKillingAnExecutor(
            Pipeline pipeline, ClusterControl clusters, Scenario scenario, List<String> notes, List<String> problems)
            throws Exception {
        Instant since = Instant.now();
        Process backfill = pipeline.startBackfillRange(scenario.from(), scenario.to());
        Optional<String> killed = clusters.killExecutorRunningATask(since, backfill::isAlive);
        if (killed.isPresent()) {
            notes.add("killed Spark " + killed.get() + " while it ran a task of the backfill");
            if (!killed.get().matches(".*listening on \\[(127\\.0\\.0\\.1:\\d+(, )?)*]\\)$")) {
                problems.add("the Spark executor listened beyond loopback: " + killed.get());
            }
        } else {
            problems.add("the backfill ended before an executor could be killed");
        }
        if (!backfill.waitFor(Pipeline.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            backfill.destroyForcibly();
            throw new IllegalStateException("backfill --cluster did not finish within " + Pipeline.WAIT);
        }
        return backfill.exitValue();
    }

    // --- the Kafka broker ---------------------------------------------------------------------------------------

    private int restartBroker(Pipeline pipeline, Traffic traffic, List<Duration> recoveries, List<String> notes)
            throws Exception {
        pause(Duration.ofSeconds(5));
        Instant stopped = Instant.now();
        control.stopBroker();
        pause(Duration.ofSeconds(15));
        control.startMissing();
        Instant back = Instant.now();
        Process produce = traffic.produce();
        if (!produce.waitFor(3, TimeUnit.MINUTES))
            throw new IllegalStateException("produce hangs after the broker restart");
        notes.add("produce during the outage exited " + produce.exitValue() + ": "
                + lastLine(lastLines(pipeline.log("produce"))));
        // produce stopped (or not); its rerun continues after the last committed line, then the job must commit.
        traffic.finish();
        recoveries.add(pipeline.awaitCommitAfter(back, stopped, Duration.ofMinutes(5)));

        Instant stoppedAgain = Instant.now();
        control.stopBroker();
        pause(Duration.ofSeconds(15));
        control.startMissing();
        recoveries.add(pipeline.awaitCommitAfter(Instant.now(), stoppedAgain, Duration.ofMinutes(5)));
        return 2;
    }

    // --- PostgreSQL ---------------------------------------------------------------------------------------------

    /**
     * PostgreSQL away (stopped, or frozen with SIGSTOP) for {@code length} while traffic flows: the first half of the
     * traffic is sent and the job has committed (its sink is connected), then {@code takeAway} takes PostgreSQL away
     * and the second half is sent during the outage; the action it returns brings PostgreSQL back, also when the
     * round fails meanwhile. An outage after the traffic had ended would test nothing but the round's patience (see
     * {@link Traffic}).
     */
    private int postgresAway(
            Pipeline pipeline, Traffic traffic, Duration length, Supplier<Runnable> takeAway, List<Duration> recoveries)
            throws Exception {
        Instant since = Instant.now();
        traffic.awaitSent();
        pipeline.awaitCommitAfter(since, since, Duration.ofMinutes(2));
        Instant away = Instant.now();
        Runnable bringBack = takeAway.get();
        try {
            traffic.sendNextPart();
            pause(length);
        } finally {
            bringBack.run();
        }
        Instant back = Instant.now();
        traffic.finish();
        recoveries.add(pipeline.awaitCommitAfter(back, away, Duration.ofMinutes(5)));
        return 1;
    }

    /**
     * How many parts a round's traffic is sent in ({@link Traffic}): a fault the job must recover from after a
     * restart or an outage gets a part for after each, so that there is traffic to commit then; the others one part,
     * their faults timed within it (the kills of {@code KILL_STREAM} at moments across the whole traffic, the
     * damaged checkpoints after a commit that needs traffic still flowing).
     */
    private static int trafficParts(Fault fault) {
        return switch (fault) {
            case KILL_STREAM_ONCE, POSTGRES_STOPPED, POSTGRES_FROZEN -> 2;
            case RESTART_AFTER_TRANSACTION_TIMEOUT -> 3;
            case CLUSTER_PROCESSES_KILLED -> 4;
            default -> 1;
        };
    }

    // --- checkpoints --------------------------------------------------------------------------------------------

    private int damageNewestCheckpoint(Pipeline pipeline, boolean delete, List<Duration> recoveries, List<String> notes)
            throws Exception {
        awaitNewCompleteCheckpoint(pipeline);
        if (delete) {
            // Deleted after its results were committed: resuming from the older one would count twice (refused).
            Instant completed =
                    Instant.ofEpochMilli(modified(newestComplete(pipeline).orElseThrow()));
            pipeline.awaitCommitAfter(completed, completed, Duration.ofMinutes(2));
        } else {
            // Corrupted right after it completed, most likely before its results were committed (older one safe).
            pause(Duration.ofMillis(200));
        }
        Instant killed = Instant.now();
        pipeline.killStream();
        Path newest = newestComplete(pipeline).orElseThrow();
        Path backup = pipeline.dir.resolve("backup-" + newest.getFileName());
        copyTree(newest, backup);
        if (delete) {
            deleteTree(newest);
        } else {
            Path metadata = newest.resolve("_metadata");
            byte[] bytes = Files.readAllBytes(metadata);
            Files.write(metadata, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        }
        Instant restartedAt = Instant.now();
        Process restarted = pipeline.startStream();
        Path logFile = pipeline.log("stream-" + pipeline.streamStarts());
        // Refused (the process exits non-zero with one line) or resumed (it prints that its job runs).
        Poll.until(
                Duration.ofMinutes(3),
                "the damaged restart to be refused or to run",
                () -> !restarted.isAlive()
                        || Files.exists(logFile) && Files.readString(logFile).contains(" running"));
        boolean refused = !restarted.isAlive() && restarted.exitValue() != 0;
        if (refused) {
            notes.add((delete ? "deleted " : "corrupted ") + newest.getFileName() + ": refused (exit "
                    + restarted.exitValue() + "): " + lastLine(lastLines(logFile)));
            deleteTree(newest);
            copyTree(backup, newest);
            restartedAt = Instant.now();
            pipeline.startStream();
        } else if (!restarted.isAlive()) {
            throw new IllegalStateException("the stream job exited 0 right after the damaged restart; see " + logFile);
        } else {
            notes.add((delete ? "deleted " : "corrupted ") + newest.getFileName()
                    + ": resumed from an older checkpoint: " + lastLine(grep(logFile, "resuming|skipping")));
        }
        awaitRunning(pipeline);
        recoveries.add(pipeline.awaitCommitAfter(restartedAt, killed, Duration.ofMinutes(3)));
        return 1;
    }

    // --- reconcile ----------------------------------------------------------------------------------------------

    private int killReconcile(
            Pipeline pipeline, Scenario scenario, List<Duration> recoveries, List<String> notes, List<String> problems)
            throws Exception {
        String servedBefore = served(pipeline);
        Instant killed;
        boolean wasRunning;
        // The correction log held (SHARE: reads go on, inserts wait) so that the run stops at its log entries, with
        // everything before them done in its transaction, and the kill lands in the middle of it however fast the
        // machine is. Waiting for the run's row instead let a run of this size finish between two polls.
        try (Connection holder = pipeline.connection()) {
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("LOCK TABLE correction_log IN SHARE MODE");
            }
            Process reconcile = pipeline.startReconcile(scenario.from(), scenario.to());
            Poll.until(
                    Duration.ofMinutes(2),
                    "reconcile to wait for the correction log",
                    () -> waitsForCorrectionLog(pipeline) || !reconcile.isAlive());
            killed = Instant.now();
            wasRunning = reconcile.isAlive();
            reconcile.destroyForcibly();
            reconcile.waitFor(1, TimeUnit.MINUTES);
            holder.rollback();
        }
        notes.add("reconcile killed " + (wasRunning ? "while it waited to write its log entries" : "too late"));
        if (!wasRunning) problems.add("reconcile ended before it was killed: the fault was not injected");
        if (!servedBefore.equals(served(pipeline))) problems.add("the killed reconcile changed the served numbers");
        int again = pipeline.reconcile(scenario.from(), scenario.to());
        recoveries.add(Duration.between(killed, Instant.now()));
        long failed = count(
                pipeline,
                "SELECT count(*) FROM reconciliation_runs WHERE status = 'failed' AND error LIKE 'abandoned%'");
        long running = count(pipeline, "SELECT count(*) FROM reconciliation_runs WHERE status = 'running'");
        notes.add("rerun exited " + again + "; killed runs marked failed: " + failed + ", still running: " + running);
        if (wasRunning && (failed != 1 || running != 0)) {
            problems.add(
                    "the killed reconcile run is not marked failed (failed " + failed + ", running " + running + ")");
        }
        return 1;
    }

    /** Whether a session waits for a lock on {@code correction_log}. */
    private static boolean waitsForCorrectionLog(Pipeline pipeline) throws Exception {
        return count(
                        pipeline,
                        "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'correction_log'::regclass")
                > 0;
    }

    private static String served(Pipeline pipeline) throws Exception {
        StringBuilder b = new StringBuilder();
        try (Connection c = pipeline.connection();
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT window_start, campaign_id, channel_id, events, spend_micros, source,"
                                + " is_final FROM window_metrics ORDER BY 1, 2, 3")) {
            while (rs.next()) {
                for (int i = 1; i <= 7; i++) b.append(rs.getString(i)).append(i == 7 ? '\n' : ',');
            }
        }
        return b.toString();
    }

    private static long count(Pipeline pipeline, String sql) throws Exception {
        try (Connection c = pipeline.connection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // --- hostile input ------------------------------------------------------------------------------------------

    /** Sends records with their own keys and record timestamps (a producer whose clock is off, a huge key). */
    private int sendDirect(Pipeline pipeline, List<PoisonCorpus.Direct> records) {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", stack.bootstrapServers());
        p.put("key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        p.put("value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        p.put("acks", "all");
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(p)) {
            for (PoisonCorpus.Direct d : records) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                                pipeline.input, null, d.recordTs(), d.key(), d.value()))
                        .get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot send the direct records", e);
        }
        return records.size();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    // --- helpers ------------------------------------------------------------------------------------------------

    /** Waits a fixed time as part of the fault's definition (an outage of 30 s), not to synchronise. */
    private static void pause(Duration d) {
        if (!d.isNegative()) LockSupport.parkNanos(d.toNanos());
    }

    private static String lastLines(Path file) {
        return lastLines(file, 5);
    }

    private static String lastLines(Path file, int n) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static String lastLine(String lines) {
        String[] all = lines.strip().split("\\R");
        return all[all.length - 1];
    }

    private static String grep(Path file, String regex) {
        try {
            return String.join(
                    "\n",
                    Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                            .filter(l -> java.util.regex.Pattern.compile(regex)
                                    .matcher(l)
                                    .find())
                            .toList());
        } catch (IOException e) {
            return "";
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(target);
                else Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
