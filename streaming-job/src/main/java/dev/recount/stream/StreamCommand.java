package dev.recount.stream;

import dev.recount.core.cli.Converters.DurationConverter;
import dev.recount.core.config.RecountConfig;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.run.JobManagerLost;
import dev.recount.stream.run.LocalFlinkEnvironment;
import dev.recount.stream.run.RunningJob;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.run.StreamSettings;
import dev.recount.stream.run.WindowCloseCheckpoints;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

/** {@code stream}: runs the streaming job (docs/contract.md). */
@Command(
        name = "stream",
        mixinStandardHelpOptions = true,
        description = {
            "Run the streaming job: validate, de-duplicate and window the input topic into stream_window_metrics, "
                    + "archive every valid event in the lake, send invalid records to the dead-letter topic and "
                    + "too-late events to the backfill topic.",
            "",
            "It resumes from its last checkpoint in stream.checkpoint-dir when there is one (the first start reads "
                    + "the input from the earliest offset). SIGTERM or Ctrl-C stops it with a savepoint, so the next "
                    + "start resumes exactly there; a second Ctrl-C cancels.",
            ""
        })
public final class StreamCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(
            names = "--bounded",
            description = "Stop at the input offsets that were latest at start, flushing every window.")
    boolean bounded;

    @Option(
            names = "--from-earliest",
            description = "Discard the checkpoints and start over from the earliest input offset.")
    boolean fromEarliest;

    @Option(
            names = "--skip-deleted-input",
            description = "Go on at the earliest offset still on the input topic where records this job had not read "
                    + "were deleted (retention while it was down, a recreated topic). Without it such a start is "
                    + "refused, and such a gap found while running fails the job: those events are counted nowhere.")
    boolean skipDeletedInput;

    @Option(
            names = "--allow-non-restored-state",
            description =
                    "Resume even if the checkpoint holds state of an "
                            + "operator this version no longer has (as Flink's --allowNonRestoredState); that state is dropped.")
    boolean allowNonRestoredState;

    @Option(
            names = "--window",
            paramLabel = "D",
            converter = DurationConverter.class,
            description = "Window size (window.size), e.g. 1m or PT1M.")
    Duration window;

    @Option(
            names = "--out-of-orderness",
            paramLabel = "D",
            converter = DurationConverter.class,
            description = "Watermark out-of-orderness (watermark.out-of-orderness).")
    Duration outOfOrderness;

    @Option(
            names = "--allowed-lateness",
            paramLabel = "D",
            converter = DurationConverter.class,
            description = "Allowed lateness (window.allowed-lateness).")
    Duration allowedLateness;

    @Option(
            names = "--idleness",
            paramLabel = "D",
            converter = DurationConverter.class,
            description = "Partition idleness timeout (watermark.idleness).")
    Duration idleness;

    @Option(names = "--parallelism", paramLabel = "N", description = "Job parallelism (stream.parallelism).")
    Integer parallelism;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (else $RECOUNT_CONFIG); see config/recount.properties.")
    Path config;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        StreamSettings settings = StreamSettings.from(RecountConfig.fromEnvironment(config)
                .with("window.size", setting(window))
                .with("watermark.out-of-orderness", setting(outOfOrderness))
                .with("window.allowed-lateness", setting(allowedLateness))
                .with("watermark.idleness", setting(idleness))
                .with("stream.parallelism", parallelism == null ? null : parallelism.toString()));

        // `flink run`: the cluster's environment; otherwise a MiniCluster on loopback with a read-only Web UI.
        LocalFlinkEnvironment environment = new LocalFlinkEnvironment(settings.webUiPort());
        RunningJob job = StreamRun.start(
                settings,
                new StreamRun.Reading(bounded, fromEarliest, skipDeletedInput),
                runConf -> {
                    Configuration conf = new Configuration(runConf);
                    conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, allowNonRestoredState);
                    return environment.create(conf);
                },
                out::println);
        environment.webUi().ifPresent(url -> out.println("Flink Web UI: " + url));
        out.println("job " + job.jobId() + " running"
                + (bounded ? " until the offsets above" : "; Ctrl-C stops it with a savepoint"));
        WindowCloseCheckpoints windowClose = settings.checkpointOnWindowClose() && environment.webUiPort() > 0
                ? StreamRun.checkpointOnWindowClose(job, environment, settings)
                : null;

        // Handled as signals rather than a shutdown hook: the JVM must keep running (with Flink's own shutdown
        // hooks not yet fired) until the savepoint is written. A second signal cancels instead; the checkpoints
        // are retained, so the next start still resumes (from the last checkpoint).
        java.util.concurrent.atomic.AtomicInteger signals = new java.util.concurrent.atomic.AtomicInteger();
        sun.misc.SignalHandler handler = sig -> {
            if (signals.incrementAndGet() == 1) {
                out.println("stopping with a savepoint (again to cancel)...");
                job.stopWithSavepointOrCancel(SAVEPOINT_PATIENCE, out::println);
            } else {
                out.println("cancelling; the next start resumes from the last checkpoint");
                job.cancel();
            }
        };
        Signal.handle(new Signal("TERM"), handler);
        Signal.handle(new Signal("INT"), handler);

        RunningJob.Outcome outcome;
        try {
            outcome = job.awaitEnd();
        } catch (Exception e) {
            // On a cluster (no MiniCluster made here) the job's end can only be learnt from its JobManager.
            if (environment.webUiPort() < 0) {
                var lost = JobManagerLost.cause(e);
                if (lost.isPresent())
                    throw JobManagerLost.error(job.jobId().toString(), settings.checkpointDir(), lost.get());
            }
            throw e;
        } finally {
            if (windowClose != null) windowClose.close();
        }
        out.println(JobTotals.summary(job.totals()));
        out.println(
                switch (outcome) {
                    case FINISHED -> "finished: every window up to the stopping offsets is flushed";
                    case STOPPED -> "stopped; `stream` resumes from the savepoint";
                    case CANCELLED -> "cancelled; `stream` resumes from the last checkpoint";
                });
        return 0;
    }

    /**
     * How long a stop keeps trying to take its savepoint. A savepoint needs every task running: right after a start
     * or a restart it is refused, and is tried again. If it never succeeds, the job is cancelled: its checkpoints
     * are retained, so the next start resumes from the last one, exactly as after a crash.
     */
    static final Duration SAVEPOINT_PATIENCE = Duration.ofMinutes(2);

    /** A flag's duration as a setting's value (ISO-8601, which every setting reads); null leaves the setting as it is. */
    private static String setting(Duration flag) {
        return flag == null ? null : flag.toString();
    }
}
