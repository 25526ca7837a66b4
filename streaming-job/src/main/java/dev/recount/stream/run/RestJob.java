package dev.recount.stream.run;

import java.util.OptionalLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.rest.messages.EmptyRequestBody;
import org.apache.flink.runtime.rest.messages.JobVertexMessageParameters;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.flink.runtime.rest.messages.job.metrics.JobVertexWatermarksHeaders;
import org.apache.flink.runtime.rest.messages.job.metrics.Metric;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link WindowCloseCheckpoints.Job} through Flink's REST API (the local Web UI's port, or a cluster's REST address). */
final class RestJob implements WindowCloseCheckpoints.Job, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RestJob.class);

    private final RestClusterClient<String> client;
    private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    private final java.net.URI checkpointUri;
    private final String checkpointToken;
    private final JobID jobId;
    private final String windowVertexName;
    private JobVertexID windowVertex;

    /**
     * @param rest             holds {@code rest.address} and {@code rest.port}
     * @param windowVertexName the name the window operator's chain starts with
     * @param checkpointToken  the secret the local read-only REST API lets a checkpoint request through with
     */
    RestJob(Configuration rest, JobID jobId, String windowVertexName, String checkpointToken) throws Exception {
        this.client = new RestClusterClient<>(rest, StreamSettings.JOB_NAME);
        this.checkpointUri = java.net.URI.create("http://"
                + rest.get(org.apache.flink.configuration.RestOptions.ADDRESS) + ":"
                + rest.get(org.apache.flink.configuration.RestOptions.PORT) + "/jobs/" + jobId + "/checkpoints");
        this.checkpointToken = checkpointToken;
        this.jobId = jobId;
        this.windowVertexName = windowVertexName;
    }

    @Override
    public OptionalLong windowWatermark() throws Exception {
        if (windowVertex == null) {
            JobDetailsInfo details = client.getJobDetails(jobId).get();
            for (JobDetailsInfo.JobVertexDetailsInfo v : details.getJobVertexInfos()) {
                if (v.getName().startsWith(windowVertexName)) windowVertex = v.getJobVertexID();
            }
            if (windowVertex == null) return OptionalLong.empty();
        }
        JobVertexMessageParameters params = JobVertexWatermarksHeaders.INSTANCE.getUnresolvedMessageParameters();
        params.jobPathParameter.resolve(jobId);
        params.jobVertexIdPathParameter.resolve(windowVertex);
        long min = Long.MAX_VALUE;
        boolean any = false;
        for (Metric m : client.sendRequest(JobVertexWatermarksHeaders.INSTANCE, params, EmptyRequestBody.getInstance())
                .get()
                .getMetrics()) {
            if (m.getId().endsWith("currentInputWatermark") && m.getValue() != null) {
                min = Math.min(min, Long.parseLong(m.getValue()));
                any = true;
            }
        }
        return any ? OptionalLong.of(min) : OptionalLong.empty();
    }

    @Override
    public void triggerCheckpoint() {
        // Plain HTTP rather than the client's trigger: the request must carry the secret header, which the read-only
        // REST API of the local MiniCluster checks (ReadOnlyRestHandler).
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(checkpointUri)
                .header("Content-Type", "application/json")
                .header(ReadOnlyRestHandler.TOKEN_HEADER, checkpointToken)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"checkpointType\":\"CONFIGURED\"}"))
                .build();
        http.sendAsync(request, java.net.http.HttpResponse.BodyHandlers.ofString())
                .whenComplete((response, e) -> {
                    if (e != null) {
                        LOG.debug("window-close checkpoint not taken: {}", e.toString());
                    } else if (response.statusCode() / 100 != 2) {
                        LOG.warn("window-close checkpoint refused ({}): {}", response.statusCode(), response.body());
                    }
                });
    }

    @Override
    public void close() {
        client.close();
    }
}
