package dev.recount.batch;

import dev.recount.core.cli.ExitCode;
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
 * <p>The outcome's gauges are {@link Pushgateway#outcome}'s, named after the job; a gauge of the command's own is
 * written out by its name, so that the test of the alerts (deploy's KnownMetrics) can check every name they read.
 */
final class ScheduledRunMetrics {
    static final String NIGHTLY_JOB = "recount_backfill_nightly";
    static final String COMPACT_JOB = "recount_lake_compact";

    private ScheduledRunMetrics() {}

    /** The run's outcome: a success for exit 0 only. */
    static Pushgateway nightly(int exitCode, Instant at) {
        return Pushgateway.outcome(NIGHTLY_JOB, exitCode, exitCode == ExitCode.OK.code(), at);
    }

    /**
     * The run's outcome (a success for exit 0 only), then the hours whose compaction failed.
     *
     * @param hoursFailed 0 when the run failed before it compacted any
     */
    static Pushgateway compact(int exitCode, int hoursFailed, Instant at) {
        return Pushgateway.outcome(COMPACT_JOB, exitCode, exitCode == ExitCode.OK.code(), at)
                .gauge("recount_lake_compact_hours_failed", hoursFailed);
    }
}
