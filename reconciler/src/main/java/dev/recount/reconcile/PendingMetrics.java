package dev.recount.reconcile;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.Pushgateway;
import java.time.Instant;

/**
 * What {@code reconcile pending} pushes to a Prometheus Pushgateway (job {@code recount_reconcile}) after each run,
 * and what deploy/monitoring/alerts.yml alerts on.
 */
record PendingMetrics(int exitCode, int reconciled, int beyond, int notCovered, Instant at) {
    static final String JOB = "recount_reconcile";

    /** The run's outcome (a success for runs that reconciled: 0 or 3), then the days by what became of them. */
    Pushgateway gauges() {
        boolean reconciledDays = exitCode == ExitCode.OK.code() || exitCode == ExitCode.BEYOND_TOLERANCE.code();
        return Pushgateway.outcome(JOB, exitCode, reconciledDays, at)
                .gauge("recount_reconcile_days_reconciled", reconciled)
                .gauge("recount_reconcile_days_beyond_tolerance", beyond)
                .gauge("recount_reconcile_days_not_covered", notCovered);
    }

    String text() {
        return gauges().text();
    }
}
