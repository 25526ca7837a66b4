package dev.recount.reconcile;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

/**
 * What {@code reconcile pending} pushes to a Prometheus Pushgateway (job {@code recount_reconcile}) after each run,
 * and what deploy/monitoring/alerts.yml alerts on. POST, not PUT: a failed run leaves the last success timestamp of an
 * earlier run in place.
 */
record PendingMetrics(int exitCode, int reconciled, int beyond, int notCovered, Instant at) {
    static final String JOB = "recount_reconcile";

    /** The text exposition format; the success timestamp only for runs that reconciled (0 or 3). */
    String text() {
        long now = at.getEpochSecond();
        StringBuilder s = new StringBuilder();
        gauge(s, "recount_reconcile_last_run_timestamp_seconds", now);
        gauge(s, "recount_reconcile_last_exit_code", exitCode);
        gauge(s, "recount_reconcile_days_reconciled", reconciled);
        gauge(s, "recount_reconcile_days_beyond_tolerance", beyond);
        gauge(s, "recount_reconcile_days_not_covered", notCovered);
        if (exitCode == ExitCodes.WITHIN_TOLERANCE || exitCode == ExitCodes.BEYOND_TOLERANCE) {
            gauge(s, "recount_reconcile_last_success_timestamp_seconds", now);
        }
        return s.toString();
    }

    private static void gauge(StringBuilder s, String name, long value) {
        s.append("# TYPE ")
                .append(name)
                .append(" gauge\n")
                .append(name)
                .append(' ')
                .append(value)
                .append('\n');
    }

    /** Pushes to {@code <baseUrl>/metrics/job/recount_reconcile}; a failure is the caller's to report, never fatal. */
    void push(String baseUrl) throws IOException, InterruptedException {
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/metrics/job/" + JOB))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "text/plain; version=0.0.4")
                .POST(HttpRequest.BodyPublishers.ofString(text()))
                .build();
        HttpResponse<String> response = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .build()
                .send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException("HTTP " + response.statusCode() + " from " + base + ": "
                    + response.body().strip());
        }
    }
}
