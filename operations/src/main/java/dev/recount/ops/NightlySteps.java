package dev.recount.ops;

import java.time.LocalDate;
import java.util.List;

/**
 * The steps of a nightly run, each returning its own command's exit code (batch-backfill's or the reconciler's).
 * The real ones run {@code backfill} and {@code reconcile} in-process ({@link InProcessSteps}); the unit tests
 * script outcomes to check the order of steps and the exit-code folding without Spark or a database.
 */
public interface NightlySteps {
    /** {@code backfill nightly --date D}: the day in the configured time-zone, then the affected windows. */
    int backfill(LocalDate day);

    /** {@code backfill compact --date D --lookback}: the day's small lake files, and late files of earlier days. */
    int compact(LocalDate day);

    /** {@code reconcile --date D}: diff, correct, report. */
    int reconcile(LocalDate day);

    /** The days from {@code since} to {@code until} (inclusive, oldest first) no succeeded reconciliation covers. */
    List<LocalDate> pending(LocalDate since, LocalDate until) throws Exception;
}
