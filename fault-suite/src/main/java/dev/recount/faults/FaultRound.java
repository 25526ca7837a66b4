package dev.recount.faults;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One round: a fresh pipeline counting the suite's three metric sets ({@link SuiteSets}), generated traffic sent by
 * `produce` while `stream` runs, one kind of fault injected (some several times, at different moments), then the job
 * drained, every output judged against the oracle's truth of what the input topic holds ({@link Accounting}), `backfill
 * range` and `reconcile` run, and every set's served numbers judged against its truth. The faults themselves are
 * {@link StreamKills}, {@link Checkpoints}, {@link ServiceOutages}, {@link ClusterFaults}, {@link ReconcileKill},
 * {@link SetAdded} and the {@link PoisonCorpus}.
 */
final class FaultRound {
    /** The event-time settings of the pipelines: short, so windows close and re-fire within the round. */
    static final Map<String, String> SETTINGS = Map.of(
            "window.size", "1m",
            "watermark.out-of-orderness", "5s",
            "window.allowed-lateness", "30s",
            "watermark.idleness", "10s",
            "stream.parallelism", "2",
            "stream.checkpoint-interval", "2s",
            // Short enough that the generator's click delays (median 90 s) leave clicks on both sides of it.
            "attribution.window", "2m");

    /** The event-time length of the main traffic. */
    private static final Duration SPAN = Duration.ofMinutes(6);

    private static final int PARTITIONS = 3;

    private final Stack stack;
    private final StackControl control;
    private final Path dir;
    private final long events;
    private final double rate;
    private final long seed;
    private final Consumer<String> log;

    FaultRound(Stack stack, Path dir, long events, double rate, long seed, Consumer<String> log) {
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
        String sets = fault == Fault.SET_ADDED ? SuiteSets.without(SuiteSets.ADDED) : SuiteSets.yaml();
        ClusterControl clusters = null;
        Pipeline pipeline;
        if (fault == Fault.CLUSTER_PROCESSES_KILLED) {
            clusters = new ClusterControl(
                    stack, new Launcher(Launcher.repositoryRoot(), stack.environment()), dir.resolve("clusters.log"));
            pipeline = Pipeline.onClusters(dir, stack, settings, sets, clusters.up(), clusters::taskManagerLogs);
        } else {
            pipeline = Pipeline.create(dir, stack, settings, sets);
        }
        try {
            return run(fault, pipeline, clusters, started);
        } catch (Exception | Error e) {
            Evidence.keep(fault, stack, dir, pipeline, e, log);
            int killed = pipeline.killRunning();
            if (killed > 0) log.accept(fault + ": killed " + killed + " command(s) the failed round left running");
            throw e;
        } finally {
            if (clusters != null) clusters.down();
        }
    }

    private RoundResult run(Fault fault, Pipeline pipeline, ClusterControl clusters, long started) throws Exception {
        RecountConfig config = RecountConfig.load(pipeline.config, Map.of());
        EventTimeSettings time = config.eventTime();
        // The sets of the whole round: the file SET_ADDED ends with.
        MetricSets sets = MetricSets.parse(SuiteSets.yaml(), "the suite's metric sets", config);
        Instant now = Instant.now();
        Scenario scenario = Scenario.generate(
                dir, events, SPAN, seed, time, sets.longestWindow(), sets.attributes(), PARTITIONS, now);
        if (fault == Fault.POISON_CORPUS) {
            PoisonCorpus poison = new PoisonCorpus(scenario.middle(), now);
            scenario = scenario.with(poison.lines(), poison.direct());
        }
        log.accept(fault + ": " + events + " events from " + scenario.start() + " over " + SPAN + ", metric sets "
                + pipeline.metricSets + ", in " + dir);

        Observations seen = new Observations();
        pipeline.startStream();
        pipeline.awaitRunning();
        Traffic traffic = Traffic.start(pipeline, scenario.file(), trafficParts(fault), rate);
        ServiceOutages outages = new ServiceOutages(control);
        ClusterFaults clusterFaults = clusters == null ? null : new ClusterFaults(clusters);
        int injections = switch (fault) {
            case KILL_STREAM_ONCE ->
                StreamKills.kill(
                        pipeline, java.util.List.of(StreamKills.KillPoint.RIGHT_AFTER_CHECKPOINT), traffic, seen);
            case KILL_STREAM -> StreamKills.kill(pipeline, StreamKills.FIVE, traffic, seen);
            case RESTART_AFTER_TRANSACTION_TIMEOUT ->
                StreamKills.restartAfterTransactionTimeout(pipeline, traffic, seen);
            case BROKER_RESTART -> outages.restartBroker(pipeline, traffic, seen);
            case POSTGRES_STOPPED -> outages.stopPostgres(pipeline, traffic, seen);
            case POSTGRES_FROZEN -> outages.freezePostgres(pipeline, traffic, seen);
            case CHECKPOINT_DELETED -> Checkpoints.damageNewest(pipeline, true, seen);
            case CHECKPOINT_CORRUPTED -> Checkpoints.damageNewest(pipeline, false, seen);
            case POISON_CORPUS -> {
                pipeline.sendDirect(scenario.direct());
                yield scenario.direct().size();
            }
            case RECONCILE_KILLED -> 0; // after the drain, below
            case CLUSTER_PROCESSES_KILLED -> clusterFaults.killFlinkProcesses(pipeline, traffic, seen);
            case SET_ADDED -> SetAdded.add(pipeline, traffic, seen);
        };
        traffic.finish();
        if (fault == Fault.POISON_CORPUS) {
            // The job has read everything once the drain below starts; failures of the running job count now.
            Poll.until(
                    Duration.ofMinutes(3),
                    "the stream job to commit after the traffic",
                    () -> pipeline.lastCommit()
                            .map(t -> t.isAfter(Instant.now().minusSeconds(3)))
                            .orElse(false));
            int failures = pipeline.failuresOfRunningJob();
            seen.notes.add("failures of the running job during the corpus: " + failures);
            if (failures != 0) seen.problems.add("the job failed " + failures + " time(s) during the poison corpus");
        }

        pipeline.stopStream();
        int drained = pipeline.drain();
        if (drained != 0)
            throw new IllegalStateException(
                    "stream --bounded exited " + drained + "; see " + pipeline.log("stream-drain"));

        OutputReader reader = new OutputReader(pipeline, stack.bootstrapServers());
        Sent sent = reader.sent();
        seen.problems.addAll(Accounting.input(scenario.values(), sent.records()));
        Outputs.AfterDrain out = reader.afterDrain(sent);
        Map<String, Long> countedFrom = new HashMap<>();
        if (fault == Fault.SET_ADDED) {
            Accounting.Backfill backfill = Accounting.backfill(sent, out.backfill());
            countedFrom.put(
                    SuiteSets.ADDED,
                    SetAdded.countedFrom(out, backfill, sent.truth().set(SuiteSets.ADDED), seen));
        }
        Accounting.Result result = Accounting.afterDrain(sent, out, countedFrom);
        if (fault == Fault.POISON_CORPUS) {
            // A producer clock 50 minutes ahead must not have moved the watermark ahead of the wall clock: every
            // too-late decision was taken with a watermark behind the clock.
            Accounting.judgedAheadOf(Instant.now().toEpochMilli(), out.backfill())
                    .ifPresent(seen.problems::add);
        }

        Range range = Range.covering(sent.truth());
        if (fault == Fault.SET_ADDED) SetAdded.backfillHistory(pipeline, reader, sent, range, seen);
        int backfilled = fault == Fault.CLUSTER_PROCESSES_KILLED
                ? clusterFaults.backfillKillingAnExecutor(pipeline, range, seen)
                : pipeline.backfillRange(range.from(), range.to());
        if (backfilled != 0)
            throw new IllegalStateException(
                    "backfill range exited " + backfilled + "; see " + pipeline.log("backfill"));
        if (fault == Fault.RECONCILE_KILLED) injections = ReconcileKill.kill(pipeline, reader, sent, range, seen);
        int reconciled = pipeline.reconcile(range.from(), range.to());
        if (reconciled != 0 && reconciled != 3) {
            throw new IllegalStateException("reconcile exited " + reconciled + "; see " + pipeline.log("reconcile"));
        }
        result = result.withServed(Accounting.served(sent, reader.served(sent))).withProblems(seen.problems);
        RoundResult round = new RoundResult(
                fault, injections, seen.recoveries, result, seen.notes, Duration.ofNanos(System.nanoTime() - started));
        log.accept(fault + ": " + (round.passed() ? "exact" : "NOT EXACT") + " — " + result + "; recoveries "
                + seen.recoveries + (seen.notes.isEmpty() ? "" : "; " + String.join("; ", seen.notes)));
        return round;
    }

    /**
     * How many parts a round's traffic is sent in ({@link Traffic}): a fault the job must recover from after a restart
     * or an outage gets a part for after each, so that there is traffic to commit then; the others one part, their
     * faults timed within it (the kills of {@code KILL_STREAM} at moments across the whole traffic, the damaged
     * checkpoints after a commit that needs traffic still flowing).
     */
    private static int trafficParts(Fault fault) {
        return switch (fault) {
            case KILL_STREAM_ONCE, POSTGRES_STOPPED, POSTGRES_FROZEN, SET_ADDED -> 2;
            case RESTART_AFTER_TRANSACTION_TIMEOUT -> 3;
            case CLUSTER_PROCESSES_KILLED -> 4;
            default -> 1;
        };
    }
}
