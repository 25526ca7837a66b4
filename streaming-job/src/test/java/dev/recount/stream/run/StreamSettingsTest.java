package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.RecountConfig;
import dev.recount.stream.run.StreamSettings.Restore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamSettingsTest {
    /** The deployment files shipped in deploy/ (the tests run in the module directory). */
    private static final Path K8S = Path.of("../deploy/k8s/config/recount.properties");

    private static final Path COMPOSE = Path.of("../deploy/compose/recount.properties");

    @Test
    void onKubernetesTheOperatorDecidesWhereTheJobResumesElsewhereTheJobDoes() {
        assertThat(settings(K8S).restore()).isEqualTo(Restore.CLUSTER);
        assertThat(settings(COMPOSE).restore()).isEqualTo(Restore.RECOUNT);
    }

    @Test
    void whenTheClusterDecidesTheJobSetsNeitherAJobIdNorASnapshot() {
        Configuration c = StreamRun.configuration(settings(K8S), null, ResumePlan.clusterDecides());
        assertThat(c.getOptional(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID)).isEmpty();
        assertThat(c.getOptional(StateRecoveryOptions.SAVEPOINT_PATH)).isEmpty();

        JobID own = JobID.generate();
        ResumePlan restore = new ResumePlan(
                ResumePlan.Kind.RESTORE,
                own,
                "file:/ckpt/chk-3",
                Map.of(),
                Long.MIN_VALUE,
                null,
                java.util.List.of(),
                "lineage");
        Configuration byRecount = StreamRun.configuration(settings(COMPOSE), own, restore);
        assertThat(byRecount.get(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID)).isEqualTo(own.toHexString());
        assertThat(byRecount.get(StateRecoveryOptions.SAVEPOINT_PATH)).isEqualTo("file:/ckpt/chk-3");
    }

    @Test
    void anUnknownRestoreModeIsNamed(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("recount.properties"), "stream.restore=operator\n");
        assertThatThrownBy(() -> settings(file))
                .hasMessageContaining("stream.restore must be recount or cluster")
                .hasMessageContaining("operator");
    }

    /** The producers' timeout is an int of milliseconds, and the broker refuses one below 1 s: hours into a run. */
    @Test
    void aKafkaTransactionTimeoutNoProducerCouldUseIsRefusedAtStart(@TempDir Path dir) throws Exception {
        for (String timeout : new String[] {"0s", "999ms", "30d"}) {
            Path file = Files.writeString(
                    dir.resolve("recount.properties"), "stream.kafka-transaction-timeout=" + timeout + "\n");
            assertThatThrownBy(() -> settings(file))
                    .as(timeout)
                    .hasMessageContaining("stream.kafka-transaction-timeout must be between 1s and");
        }
        Path fine = Files.writeString(dir.resolve("fine.properties"), "stream.kafka-transaction-timeout=1s\n");
        assertThat(settings(fine).kafkaTransactionTimeout()).hasSeconds(1);
    }

    @Test
    void checkpointsOnWindowCloseLeaveTheWebUisMetricRefreshAlone(@TempDir Path dir) throws Exception {
        // The watermark is read in the JVM (WindowWatermarkGauges), not through the REST API's copy of the metrics:
        // refreshing that copy every 200 ms cost CPU for nothing.
        for (String on : new String[] {"true", "false"}) {
            Configuration c = StreamRun.configuration(
                    settings(Files.writeString(
                            dir.resolve(on + ".properties"), "stream.checkpoint-on-window-close=" + on + "\n")),
                    null,
                    ResumePlan.clusterDecides());
            assertThat(c.getOptional(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL))
                    .as("checkpoint-on-window-close=" + on)
                    .isEmpty();
        }
    }

    private static StreamSettings settings(Path file) {
        RecountConfig config = RecountConfig.load(file, Map.of());
        // A pod mounts the ConfigMap at /etc/recount; here the definitions it names are the file beside the config.
        Path beside = file.resolveSibling("metric-sets.yaml");
        if (config.get("metric-sets.file").startsWith("/etc/recount/") && Files.exists(beside)) {
            config = config.with("metric-sets.file", beside.toString());
        }
        return StreamSettings.from(config);
    }
}
