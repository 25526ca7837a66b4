package dev.recount.stream.run;

import dev.recount.core.event.EventValidator;
import dev.recount.stream.StreamJob;
import dev.recount.stream.StreamSinks;
import dev.recount.stream.lake.LakeLedgerSink;
import dev.recount.stream.lake.LakeSink;
import dev.recount.stream.sink.AttributionMetricsSink;
import dev.recount.stream.sink.KafkaOutputs;
import dev.recount.stream.sink.PostgresTarget;
import dev.recount.stream.sink.WindowMetricsSink;
import dev.recount.stream.source.KafkaInput;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.SinkOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.common.TopicPartition;

/**
 * Starts one run of the streaming job: decides where it resumes ({@link RunLedger#plan}), notes the run, configures
 * checkpointing and restore, builds the pipeline with the real source and sinks, and submits it.
 *
 * <p>Checkpoints are retained on cancellation and failure, in {@code stream.checkpoint-dir}; the next start
 * restores the newest one. Together with the two-phase sinks that makes a kill -9 at any moment harmless.
 */
public final class StreamRun {

    /** Creates the execution environment: a local MiniCluster with Web UI, a cluster's context, or a test's. */
    @FunctionalInterface
    public interface Environments {
        StreamExecutionEnvironment create(Configuration configuration);
    }

    private StreamRun() {}

    /**
     * How a start reads the input (the command's flags).
     *
     * @param bounded stop at the input offsets that are latest now (--bounded)
     * @param fromEarliest discard the checkpoints and read the input from its earliest offset (--from-earliest)
     * @param skipDeletedInput go on at the earliest offset still on the input topic where records the job had not
     *     read were deleted (--skip-deleted-input, see {@link DeletedInput}); otherwise such a start is refused, and
     *     a gap found while running fails the job
     */
    public record Reading(boolean bounded, boolean fromEarliest, boolean skipDeletedInput) {}

    /** A start that refuses to skip input records deleted before the job read them. */
    public static RunningJob start(
            StreamSettings s, boolean bounded, boolean fromEarliest, Environments environments, Consumer<String> log)
            throws Exception {
        return start(s, new Reading(bounded, fromEarliest, false), environments, log);
    }

    /**
     * @param log receives a few human-readable lines about the run (where it resumes, what it reads)
     */
    public static RunningJob start(StreamSettings s, Reading reading, Environments environments, Consumer<String> log)
            throws Exception {
        Objects.requireNonNull(s, "settings");
        if (s.restore() == StreamSettings.Restore.CLUSTER) {
            return startAsTheClusterDecides(s, reading, environments, log);
        }
        boolean bounded = reading.bounded();
        boolean fromEarliest = reading.fromEarliest();
        // Nothing is written (not even the run ledger) before both checks passed.
        Preflight.Checked checked = Preflight.checkAndRead(s);
        RunLedger ledger = new RunLedger(s.checkpointDir());
        if (fromEarliest) {
            ledger.discardAll();
            log.accept(
                    "discarded the checkpoints in " + s.checkpointDir() + "; starting over from the earliest offsets");
        }
        ResumePlan plan = RestoreGuard.check(
                ledger.plan(bounded, s.topics().input(), s.setWindowMillis()),
                checked.committed(),
                fromEarliest,
                RestoreGuard::readCheckpointId,
                log);
        log.accept(plan.describe());
        checkDeletedInput(s, plan, checked.input(), reading.skipDeletedInput(), log);

        Map<TopicPartition, Long> stopOffsets = null;
        if (bounded) {
            stopOffsets = new HashMap<>(checked.input().latest());
            if (plan.carriedStopOffsets() != null) stopOffsets.putAll(plan.carriedStopOffsets());
            log.accept("--bounded: stopping at offsets " + RunRecord.formatOffsets(stopOffsets));
        }

        JobID jobId = JobID.generate();
        ledger.recordStart(
                jobId,
                new RunRecord(
                        System.currentTimeMillis(),
                        s.topics().input(),
                        s.setWindowMillis(),
                        bounded,
                        plan.closedUntil(),
                        stopOffsets,
                        false,
                        Long.MIN_VALUE,
                        plan.lineage()));
        ledger.pruneAllExcept(jobId, plan.fromJob());

        JobClient client = submit(
                s, environments.create(configuration(s, jobId, plan)), plan, stopOffsets, reading.skipDeletedInput());
        if (!client.getJobID().equals(jobId)) {
            // The run record would describe another job's checkpoints: refuse rather than resume wrongly later.
            client.cancel();
            throw new IllegalStateException(
                    "Flink ignored the fixed job id " + jobId + " (got " + client.getJobID() + ")");
        }
        return new RunningJob(
                client, ledger, plan, bounded, ledger.jobDirectory(jobId).toString());
    }

    /**
     * {@code stream.restore=cluster}: the Flink Kubernetes Operator (or {@code flink run -s}) decides where a start
     * resumes and knows the job by the id it assigned. The job then neither picks a snapshot nor fixes its own id —
     * with both deciding, an upgrade could resume from the job's choice instead of the operator's savepoint.
     */
    private static RunningJob startAsTheClusterDecides(
            StreamSettings s, Reading reading, Environments environments, Consumer<String> log) throws Exception {
        if (reading.bounded() || reading.fromEarliest()) {
            throw new IllegalArgumentException("--bounded and --from-earliest need stream.restore=recount; with"
                    + " stream.restore=cluster the cluster decides where the job starts (deploy it without a savepoint"
                    + " to start over)");
        }
        Preflight.check(s);
        ResumePlan plan = ResumePlan.clusterDecides();
        log.accept(plan.describe());
        if (reading.skipDeletedInput()) {
            log.accept("--skip-deleted-input: input records deleted before the job read them are skipped");
        }
        JobClient client =
                submit(s, environments.create(configuration(s, null, plan)), plan, null, reading.skipDeletedInput());
        return new RunningJob(client, null, plan, false, s.checkpointDir().toString());
    }

    /**
     * Refuses a start that would resume below the earliest offset the input still holds (records deleted before the
     * job read them), unless {@code skip}; then it says what is skipped. A restore's position is the consumer group's
     * (see {@link DeletedInput}), a continuation's the previous bounded run's stopping offsets; a fresh start reads
     * from the earliest offset and skips nothing.
     */
    private static void checkDeletedInput(
            StreamSettings s, ResumePlan plan, Preflight.InputOffsets input, boolean skip, Consumer<String> log) {
        Map<TopicPartition, Long> resumeAt = switch (plan.kind()) {
            case RESTORE -> input.group();
            case CONTINUE_AFTER_BOUNDED -> plan.startOffsets();
            default -> Map.of();
        };
        List<DeletedInput> gaps = DeletedInput.between(resumeAt, input.earliest(), input.latest());
        if (skip) {
            log.accept("--skip-deleted-input: "
                    + (gaps.isEmpty()
                            ? "no gap is known (if one is found while reading, the job goes on after it)"
                            : "skipping what was deleted: " + DeletedInput.describe(gaps)
                                    + "; those events are counted nowhere"));
        } else if (!gaps.isEmpty()) {
            throw new IllegalStateException(DeletedInput.refusal(s.topics().input(), gaps));
        }
    }

    private static JobClient submit(
            StreamSettings s,
            StreamExecutionEnvironment env,
            ResumePlan plan,
            Map<TopicPartition, Long> stopOffsets,
            boolean skipDeletedInput)
            throws Exception {
        KafkaInput input = new KafkaInput(
                s.bootstrapServers(),
                s.topics().input(),
                s.consumerGroup(),
                new EventValidator(s.eventTime().validation(), s.sets().attributes()),
                plan.startOffsets(),
                stopOffsets,
                skipDeletedInput);
        StreamJob.build(
                env,
                input.source(),
                sinks(s, plan.lineage()),
                s.eventTime(),
                s.sets(),
                s.attributing() ? s.attribution().rule() : null,
                plan.closedUntil());
        return env.executeAsync(StreamSettings.JOB_NAME);
    }

    /**
     * Starts {@link WindowCloseCheckpoints} for {@code job} on the local MiniCluster of {@code environment}: the
     * watermark read in this JVM, checkpoint requests through its REST API with its secret. Null (and a log line) when
     * it cannot be set up: the periodic checkpoints still commit every row, only later.
     */
    public static WindowCloseCheckpoints checkpointOnWindowClose(
            RunningJob job, LocalFlinkEnvironment environment, StreamSettings s) {
        try {
            return new WindowCloseCheckpoints(
                            new LocalClusterJob(
                                    job.jobId(),
                                    environment.windowWatermarks(),
                                    environment.webUiPort(),
                                    environment.checkpointToken()),
                            s.setWindowMillis().values(),
                            System::currentTimeMillis)
                    .start(WINDOW_CLOSE_POLL_MILLIS);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(StreamRun.class)
                    .warn(
                            "no checkpoints on window close ({}); rows are "
                                    + "committed with the periodic checkpoints",
                            e.toString());
            return null;
        }
    }

    /**
     * How often the window operator's watermark is read for {@link #checkpointOnWindowClose}: a window-close
     * checkpoint is asked for at most this long after the watermark passed the window end.
     */
    static final long WINDOW_CLOSE_POLL_MILLIS = 200;

    /** @param lineage the chain of runs this run continues (ResumePlan#lineage) */
    public static StreamSinks sinks(StreamSettings s, String lineage) {
        StreamSinks sinks = new StreamSinks(
                new WindowMetricsSink(
                        new PostgresTarget(s.postgres(), s.postgresPassword()),
                        StreamSettings.JOB_NAME,
                        lineage,
                        KafkaOutputs.rejectedRows(
                                s.bootstrapServers(),
                                s.topics().deadLetter(),
                                s.publicationId("dead-letter"),
                                s.kafkaTransactionTimeout()),
                        s.sets()),
                LakeSink.create(s.lakePath().toString()),
                new LakeLedgerSink(new PostgresTarget(s.postgres(), s.postgresPassword())),
                KafkaOutputs.deadLetters(
                        s.bootstrapServers(),
                        s.topics().deadLetter(),
                        s.publicationId("dead-letter"),
                        lineage,
                        s.kafkaTransactionTimeout()),
                KafkaOutputs.backfill(
                        s.bootstrapServers(),
                        s.topics().backfill(),
                        s.publicationId("backfill"),
                        lineage,
                        s.kafkaTransactionTimeout()));
        return s.attributing()
                ? sinks.withAttribution(
                        new AttributionMetricsSink(new PostgresTarget(s.postgres(), s.postgresPassword()), s.sets()))
                : sinks;
    }

    static Configuration configuration(StreamSettings s, JobID jobId, ResumePlan plan) {
        Configuration c = new Configuration();
        c.set(PipelineOptions.NAME, StreamSettings.JOB_NAME);
        // Known ids, so the run record can be written before the first checkpoint exists (not when the cluster
        // assigns the id: stream.restore=cluster).
        if (jobId != null) c.set(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID, jobId.toHexString());
        c.set(CoreOptions.DEFAULT_PARALLELISM, s.parallelism());
        // Every type in the pipeline has a Flink serializer; Kryo creeping in would be a silent slowdown.
        c.set(PipelineOptions.GENERIC_TYPES, false);
        // No copy per record between chained operators. Safe here: no function keeps a reference to an input
        // record (state holds immutable id Strings, accumulators and freshly built rows), and every sink serializes or
        // writes
        // a record before it returns.
        c.set(PipelineOptions.OBJECT_REUSE, true);

        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, s.checkpointInterval());
        c.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
        c.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        c.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, s.checkpointDir().toString());
        c.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, s.checkpointDir().toString());
        c.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        // More than one, so an unreadable newest checkpoint can be skipped when nothing of it was committed
        // (RestoreGuard decides); the older ones cost only disk until they are subsumed.
        c.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, s.retainedCheckpoints());
        c.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, s.checkpointTimeout());

        // A failure (PostgreSQL or Kafka away, a commit that timed out) restarts the job from its last checkpoint,
        // again and again with growing pauses, until the outage is over: nothing is lost while it waits, the
        // outputs of completed checkpoints wait in the committers' state. Stated here rather than left to
        // Flink's defaults, so operations can rely on it (docs/operations.md, "restarts").
        c.set(RestartStrategyOptions.RESTART_STRATEGY, "exponential-delay");
        c.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF, Duration.ofSeconds(1));
        c.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, Duration.ofSeconds(30));
        c.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER, 2.0);
        c.set(
                RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD,
                Duration.ofMinutes(10));
        c.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR, 0.1);
        c.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS, Integer.MAX_VALUE);
        // A failed commit is not retried in a tight loop on the task thread (each try may wait out a timeout):
        // once more, then the job restarts with the back-off above.
        c.set(SinkOptions.COMMITTER_RETRIES, 1);
        if (plan.kind() == ResumePlan.Kind.RESTORE) c.set(StateRecoveryOptions.SAVEPOINT_PATH, plan.snapshot());
        return c;
    }
}
