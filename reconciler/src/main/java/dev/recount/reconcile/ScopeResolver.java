package dev.recount.reconcile;

import dev.recount.db.tables.BatchRunsTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;

/** Turns what the command line asked for (a range, a date, a batch run) into a {@link Scope}. */
public final class ScopeResolver {
    private ScopeResolver() {}

    public static Scope range(Instant from, Instant to) {
        return Scope.range(from, to, "range");
    }

    /** A day from midnight to midnight in {@code zone} (23 or 25 hours across a DST change). */
    public static Scope date(LocalDate day, ZoneId zone) {
        return Scope.range(dayStart(day, zone), dayStart(day.plusDays(1), zone), "date " + day);
    }

    public static Instant dayStart(LocalDate day, ZoneId zone) {
        return day.atStartOfDay(zone).toInstant();
    }

    /**
     * The windows of one succeeded batch run: its range for `range` and `nightly` runs; for an `affected` run,
     * exactly the windows it recomputed, as it recorded them ({@code details.windows}): its range may span windows
     * it did not recompute, and its rows cannot name them, since a row keeps the run that last changed it.
     *
     * @throws NotCoveredException if the run does not exist, has not succeeded, or recomputed no windows
     */
    public static Scope batchRun(Connection conn, long batchRunId) throws SQLException {
        BatchRunsTable.Run run = BatchRunsTable.find(conn, batchRunId)
                .orElseThrow(() -> new NotCoveredException("batch run " + batchRunId + " does not exist"));
        if (run.status() != BatchRunsTable.Status.SUCCEEDED) {
            throw new NotCoveredException("batch run " + batchRunId + " has status "
                    + run.status().wireName() + "; only a succeeded run can be reconciled against");
        }
        if (run.mode() != BatchRunsTable.Mode.AFFECTED) {
            if (run.rangeFrom() == null || run.rangeTo() == null) {
                throw new NotCoveredException("batch run " + batchRunId + " recorded no range");
            }
            return new Scope(run.rangeFrom(), run.rangeTo(), null, batchRunId, "batch run " + batchRunId);
        }
        List<Long> starts = BatchRunsTable.recordedWindows(conn, batchRunId);
        if (starts.isEmpty() || run.rangeTo() == null) {
            throw new NotCoveredException("batch run " + batchRunId + " (affected) recomputed no windows");
        }
        return new Scope(
                starts.get(0),
                run.rangeTo(),
                starts,
                batchRunId,
                "batch run " + batchRunId + " (" + starts.size() + " windows)");
    }
}
