package dev.recount.stream.run;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Objects;
import java.util.OptionalLong;
import org.apache.flink.api.common.JobID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WindowCloseCheckpoints.Job} for a job on this JVM's MiniCluster ({@link LocalFlinkEnvironment}): the window
 * operator's watermark read from its gauges in this JVM ({@link WindowWatermarkGauges}), checkpoints asked for through
 * the local REST API with the JVM's secret (the one write its read-only API lets through: {@link ReadOnlyRestHandler}).
 */
final class LocalClusterJob implements WindowCloseCheckpoints.Job {
    private static final Logger LOG = LoggerFactory.getLogger(LocalClusterJob.class);

    private final JobID jobId;
    private final WindowWatermarkGauges watermarks;
    private final URI checkpointUri;
    private final String checkpointToken;
    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * @param restPort        the local Web UI's port (its REST API)
     * @param checkpointToken the secret the local read-only REST API lets a checkpoint request through with
     */
    LocalClusterJob(JobID jobId, WindowWatermarkGauges watermarks, int restPort, String checkpointToken) {
        this.jobId = Objects.requireNonNull(jobId, "jobId");
        this.watermarks = Objects.requireNonNull(watermarks, "watermarks");
        if (restPort <= 0 || restPort > 65535)
            throw new IllegalArgumentException("restPort must be 1..65535, got " + restPort);
        this.checkpointUri = URI.create(
                "http://" + LocalFlinkEnvironment.LOOPBACK + ":" + restPort + "/jobs/" + jobId + "/checkpoints");
        this.checkpointToken = Objects.requireNonNull(checkpointToken, "checkpointToken");
    }

    @Override
    public OptionalLong windowWatermark() {
        return watermarks.watermark(jobId);
    }

    @Override
    public void triggerCheckpoint() {
        // Plain HTTP rather than Flink's REST client: the request must carry the secret header, which the read-only
        // REST API of the local MiniCluster checks (ReadOnlyRestHandler).
        HttpRequest request = HttpRequest.newBuilder(checkpointUri)
                .header("Content-Type", "application/json")
                .header(ReadOnlyRestHandler.TOKEN_HEADER, checkpointToken)
                .POST(HttpRequest.BodyPublishers.ofString("{\"checkpointType\":\"CONFIGURED\"}"))
                .build();
        http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((response, e) -> {
            if (e != null) {
                LOG.debug("window-close checkpoint not taken: {}", e.toString());
            } else if (response.statusCode() / 100 != 2) {
                LOG.warn("window-close checkpoint refused ({}): {}", response.statusCode(), response.body());
            }
        });
    }
}
