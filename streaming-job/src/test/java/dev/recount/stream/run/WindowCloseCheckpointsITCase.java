package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.stream.StreamJob;
import dev.recount.testkit.Poll;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

/**
 * Window-close checkpoints on the real local environment of {@code ./recount stream} (MiniCluster, read-only REST API,
 * the watermark reporter): the watermark of the operator named like the job's window operator is seen in this JVM,
 * and when it passes a window end a checkpoint is triggered through the REST API and completes. Periodic
 * checkpoints are an hour apart, so the one that completes is the triggered one.
 */
class WindowCloseCheckpointsITCase {
    private static final long MINUTE = 60_000;
    private static final long W1 = 1_795_946_460_000L; // a window end (2026-11-29T10:01:00Z)
    private static final Pattern COMPLETED = Pattern.compile("\"completed\"\\s*:\\s*(\\d+)");

    @Test
    void theWatermarkIsReadInTheJvmAndAWindowEndTriggersACheckpoint() throws Exception {
        LocalFlinkEnvironment local = new LocalFlinkEnvironment(0);
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
        StreamExecutionEnvironment env = local.create(conf);

        // Event time climbs 100 ms per record, 20 records a second: the watermark reaches W1 about 4 s in.
        DataGeneratorSource<Long> times = new DataGeneratorSource<>(
                i -> W1 - 4_000 + i * 100, Long.MAX_VALUE, RateLimiterStrategy.perSecond(20), Types.LONG);
        env.fromSource(
                        times,
                        WatermarkStrategy.<Long>forMonotonousTimestamps().withTimestampAssigner((t, ts) -> t),
                        "event-times")
                .keyBy(t -> t % 2)
                .map(t -> t)
                .name(StreamJob.WINDOW)
                .sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync("window-close-checkpoints-it");
        JobID jobId = job.getJobID();
        HttpClient http = HttpClient.newHttpClient();
        try (WindowCloseCheckpoints windowClose = new WindowCloseCheckpoints(
                        new LocalClusterJob(
                                jobId, local.windowWatermarks(), local.webUiPort(), local.checkpointToken()),
                        java.util.List.of(MINUTE),
                        () -> W1 + 35_000) // a job that keeps up with the clock
                .start(StreamRun.WINDOW_CLOSE_POLL_MILLIS)) {
            OptionalLong before = Poll.untilPresent(
                    Duration.ofSeconds(60), "a watermark before the window end, read in the JVM", () -> {
                        OptionalLong w = local.windowWatermarks().watermark(jobId);
                        return w.isPresent() && w.getAsLong() > W1 - 4_000 && w.getAsLong() < W1 - 1
                                ? java.util.Optional.of(w)
                                : java.util.Optional.empty();
                    });
            assertThat(completedCheckpoints(http, local, jobId))
                    .as("no checkpoint before the window end (watermark %s)", before)
                    .isZero();

            Poll.until(
                    Duration.ofSeconds(60),
                    "a checkpoint after the watermark passed the window end",
                    () -> completedCheckpoints(http, local, jobId) >= 1);
            assertThat(windowClose.triggered()).isGreaterThanOrEqualTo(1);
            assertThat(local.windowWatermarks().watermark(jobId).orElseThrow()).isGreaterThanOrEqualTo(W1 - 1);
        } finally {
            job.cancel().get();
        }
        Poll.until(
                Duration.ofSeconds(30),
                "the cancelled job's gauges to be removed",
                () -> local.windowWatermarks().watermark(jobId).isEmpty());
    }

    private static int completedCheckpoints(HttpClient http, LocalFlinkEnvironment local, JobID jobId)
            throws Exception {
        String body = http.send(
                        HttpRequest.newBuilder(
                                        URI.create(local.webUi().orElseThrow() + "/jobs/" + jobId + "/checkpoints"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Matcher m = COMPLETED.matcher(body);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
