package dev.recount.ops;

import dev.recount.core.cli.Pushgateway;
import java.time.Instant;

/**
 * What {@code correct} pushes to a Prometheus Pushgateway (job {@code recount_correct}) after each run. A run that
 * corrected (exit 0 or 3: with the default tolerance of 0 every late event makes it 3) records its success time;
 * {@code RecountCorrectNotCompleting} fires when none has for 30 minutes, whatever the runs in between exited with
 * (a backfill that fails every time, say on backfill records deleted before they were read, exits 5 on every run).
 *
 * @param windows the windows the run recomputed and reconciled (0 when nothing was new, or it failed before)
 */
record CorrectMetrics(int exitCode, int windows, Instant at) {
    static final String JOB = "recount_correct";

    Pushgateway gauges() {
        long now = at.getEpochSecond();
        Pushgateway g = new Pushgateway(JOB)
                .gauge("recount_correct_last_run_timestamp_seconds", now)
                .gauge("recount_correct_last_exit_code", exitCode)
                .gauge("recount_correct_windows_corrected", windows);
        if (exitCode == ExitCodes.OK || exitCode == ExitCodes.BEYOND_TOLERANCE) {
            g.gauge("recount_correct_last_success_timestamp_seconds", now);
        }
        return g;
    }
}
