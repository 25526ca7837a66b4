package dev.recount.core.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * What a scheduled command tells a Prometheus Pushgateway about its last run: gauges under one job name, in the text
 * exposition format. A short-lived Job has nothing for Prometheus to scrape, so the commands that run on a schedule
 * push when {@value #URL_VARIABLE} is set, and deploy/monitoring/alerts.yml alerts on what they pushed.
 *
 * <p>Pushed with POST, not PUT: a gauge a run leaves out (the last success time, after a failed run) keeps the value
 * an earlier run pushed, which is what "no success for N minutes" needs.
 */
public final class Pushgateway {
    /** The environment variable holding the Pushgateway's base URL, e.g. {@code http://pushgateway:9091}. */
    public static final String URL_VARIABLE = "RECOUNT_PUSHGATEWAY_URL";

    private final String job;
    private final StringBuilder text = new StringBuilder();

    /** The suffixes of the gauges {@link #outcome} names after the job. */
    public static final String LAST_RUN = "_last_run_timestamp_seconds",
            LAST_EXIT_CODE = "_last_exit_code",
            LAST_SUCCESS = "_last_success_timestamp_seconds";

    public Pushgateway(String job) {
        this.job = job;
    }

    /**
     * The outcome of one run of a scheduled command, under {@code job} and named after it: {@code
     * <job>_last_run_timestamp_seconds}, {@code <job>_last_exit_code} and, only when the run {@code succeeded} (what
     * that means is the command's), {@code <job>_last_success_timestamp_seconds}. The "not completing" alerts read the
     * last two: pushed with POST, a failed run leaves the success time of the last good one. The command adds its own
     * gauges after these.
     */
    public static Pushgateway outcome(String job, int exitCode, boolean succeeded, Instant at) {
        long now = at.getEpochSecond();
        Pushgateway g = new Pushgateway(job).gauge(job + LAST_RUN, now).gauge(job + LAST_EXIT_CODE, exitCode);
        return succeeded ? g.gauge(job + LAST_SUCCESS, now) : g;
    }

    public Pushgateway gauge(String name, long value) {
        text.append("# TYPE ")
                .append(name)
                .append(" gauge\n")
                .append(name)
                .append(' ')
                .append(value)
                .append('\n');
        return this;
    }

    /** The gauges so far, in the text exposition format. */
    public String text() {
        return text.toString();
    }

    /** Pushes to {@code <baseUrl>/metrics/job/<job>}; fails on anything but a 2xx answer. */
    public void push(String baseUrl) throws IOException, InterruptedException {
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/metrics/job/" + job))
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

    /**
     * Pushes when {@value #URL_VARIABLE} is set in {@code variables}. A failed push never changes a run's outcome:
     * it comes back as one line for standard error, or {@code null} when there was nothing to say.
     */
    public String pushIfConfigured(Map<String, String> variables) {
        String url = variables.get(URL_VARIABLE);
        if (url == null || url.isBlank()) return null;
        try {
            push(url);
            return null;
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            return "pushing metrics to " + url + " failed (the run's outcome stands): " + RecountCli.reason(e);
        }
    }
}
