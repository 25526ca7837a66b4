package dev.recount.reconcile;

import dev.recount.core.cli.Pushgateway;
import java.time.Instant;

/**
 * What {@code reconcile pending} pushes to a Prometheus Pushgateway (job {@code recount_reconcile}) after each run,
 * and what deploy/monitoring/alerts.yml alerts on.
 */
record PendingMetrics(int exitCode, int reconciled, int beyond, int notCovered, Instant at) {
    static final String JOB = "recount_reconcile";

    /** The gauges; the success timestamp only for runs that reconciled (0 or 3). */
    Pushgateway gauges() {
        long now = at.getEpochSecond();
        Pushgateway g = new Pushgateway(JOB)
                .gauge("recount_reconcile_last_run_timestamp_seconds", now)
                .gauge("recount_reconcile_last_exit_code", exitCode)
                .gauge("recount_reconcile_days_reconciled", reconciled)
                .gauge("recount_reconcile_days_beyond_tolerance", beyond)
                .gauge("recount_reconcile_days_not_covered", notCovered);
        if (exitCode == ExitCodes.WITHIN_TOLERANCE || exitCode == ExitCodes.BEYOND_TOLERANCE) {
            g.gauge("recount_reconcile_last_success_timestamp_seconds", now);
        }
        return g;
    }

    String text() {
        return gauges().text();
    }
}
