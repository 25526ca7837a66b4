package dev.recount.batch;

import dev.recount.core.cli.Pushgateway;
import java.time.Instant;

/**
 * What the two scheduled backfill commands push to a Prometheus Pushgateway after each run, whatever it exits with:
 * {@code backfill nightly} (job {@code recount_backfill_nightly}) and {@code backfill compact} (job
 * {@code recount_lake_compact}). Only a run that exits 0 records its success time, so
 * {@code RecountNightlyBackfillNotCompleting} and {@code RecountLakeCompactionNotCompleting} fire when none has for
 * too long, whether the runs fail, are refused (the stream is behind) or no longer start at all. Without them a
 * failed nightly backfill showed only a step later, as a day the reconciliation could not cover.
 *
 * <p>Each gauge is written out by its name, so that on-call can find where it comes from and the test of the alerts
 * (deploy's KnownMetrics) can check that every name they read is pushed here.
 */
final class ScheduledRunMetrics {
    static final String NIGHTLY_JOB = "recount_backfill_nightly";
    static final String COMPACT_JOB = "recount_lake_compact";

    private ScheduledRunMetrics() {}

    static Pushgateway nightly(int exitCode, Instant at) {
        long now = at.getEpochSecond();
        Pushgateway g = new Pushgateway(NIGHTLY_JOB)
                .gauge("recount_backfill_nightly_last_run_timestamp_seconds", now)
                .gauge("recount_backfill_nightly_last_exit_code", exitCode);
        if (exitCode == ExitCodes.OK) g.gauge("recount_backfill_nightly_last_success_timestamp_seconds", now);
        return g;
    }

    /** @param hoursFailed the hours whose compaction failed (0 when the run failed before it compacted any) */
    static Pushgateway compact(int exitCode, int hoursFailed, Instant at) {
        long now = at.getEpochSecond();
        Pushgateway g = new Pushgateway(COMPACT_JOB)
                .gauge("recount_lake_compact_last_run_timestamp_seconds", now)
                .gauge("recount_lake_compact_last_exit_code", exitCode)
                .gauge("recount_lake_compact_hours_failed", hoursFailed);
        if (exitCode == ExitCodes.OK) g.gauge("recount_lake_compact_last_success_timestamp_seconds", now);
        return g;
    }
}
