package dev.recount.ops;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.Pushgateway;
import dev.recount.db.tables.BackfillWaitingTable;
import java.time.Instant;

/**
 * What {@code correct} pushes to a Prometheus Pushgateway (job {@code recount_correct}) after each run. A run that
 * corrected (exit 0 or 3: with the default tolerance of 0 every late event makes it 3) records its success time;
 * {@code RecountCorrectNotCompleting} fires when none has for 30 minutes, whatever the runs in between exited with
 * (a backfill that fails every time, say on backfill records deleted before they were read, exits 1 on every run).
 *
 * <p>With them, what waits in {@code backfill_waiting} after the run's backfill: records that could not be settled yet.
 * They wait minutes as a rule (a window still open in the lake, a file not committed yet); one waiting for hours names
 * an event the lake does not hold, which {@code RecountBackfillRecordsWaiting} watches. And how many records the run
 * skipped as malformed: their windows are never recomputed by {@code correct}, which
 * {@code RecountBackfillRecordsMalformed} watches.
 *
 * @param windows the windows the run recomputed and reconciled (0 when nothing was new, or it failed before)
 * @param waiting what waits after the run's backfill; null when the backfill failed (the last values stand)
 * @param malformed the backfill records the run skipped as malformed (0 when its backfill failed)
 */
record CorrectMetrics(int exitCode, int windows, BackfillWaitingTable.Summary waiting, int malformed, Instant at) {
    static final String JOB = "recount_correct";

    /** The run's outcome (a success for exit 0 or 3), then the windows it corrected and what waits. */
    Pushgateway gauges() {
        boolean completed = exitCode == ExitCode.OK.code() || exitCode == ExitCode.BEYOND_TOLERANCE.code();
        Pushgateway p =
                Pushgateway.outcome(JOB, exitCode, completed, at).gauge("recount_correct_windows_corrected", windows);
        if (waiting == null) return p;
        return p.gauge("recount_correct_backfill_records_waiting", waiting.records())
                .gauge("recount_correct_backfill_oldest_waiting_seconds", waiting.oldestWaitingSeconds())
                .gauge("recount_correct_backfill_records_malformed", malformed);
    }
}
