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

    /** The run's outcome (a success for exit 0 or 3), then the windows it corrected. */
    Pushgateway gauges() {
        boolean completed = exitCode == ExitCodes.OK || exitCode == ExitCodes.BEYOND_TOLERANCE;
        return Pushgateway.outcome(JOB, exitCode, completed, at).gauge("recount_correct_windows_corrected", windows);
    }
}
