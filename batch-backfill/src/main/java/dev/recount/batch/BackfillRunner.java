package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.apache.spark.sql.SparkSession;

/**
 * Backfill runs of a set of metric sets, from start to finish: {@link RangeRun} (a range, or a nightly day) and
 * {@link AffectedRun} (the windows the backfill topic names). Each is one {@code batch_runs} row (committed at once,
 * so even a run that dies is visible), the completeness boundary, the advisory locks, the Spark computation of every
 * set from one read of the lake ({@link SetRecompute}), staging, and ONE transaction that replaces each set's scope
 * and marks the run succeeded ({@link RunLifecycle}). Any failure rolls back, drops the run's staging rows and records
 * the error on the run row; the previous results stay in place.
 */
public final class BackfillRunner {
    /** Results up to this many window rows are staged from the driver; larger ones from the executors. */
    public static final long DEFAULT_DRIVER_MAX_ROWS = 50_000;

    private final RunContext run;

    /** A runner of every declared metric set ({@code settings.sets()}). */
    public BackfillRunner(
            SparkSession spark,
            DataSource db,
            BackfillSettings settings,
            String password,
            long driverMaxRows,
            Duration progressInterval) {
        this(spark, db, settings, password, driverMaxRows, progressInterval, settings.sets());
    }

    /** A runner of {@code sets} (every declared one, or one of them: {@link BackfillSettings#selected}). */
    public BackfillRunner(
            SparkSession spark,
            DataSource db,
            BackfillSettings settings,
            String password,
            long driverMaxRows,
            Duration progressInterval,
            MetricSets sets) {
        this.run = new RunContext(
                spark,
                db,
                settings,
                sets,
                new StagingWriter(settings.postgres(), password, driverMaxRows),
                () -> BackfillTopicReader.newConsumer(settings.bootstrapServers(), settings.affectedGroup()),
                progressInterval);
    }

    /** Recomputes every window of every set in {@code range} (aligned to each set's windows) and replaces them. */
    public RangeReport recomputeRange(Mode mode, TimeRange range, boolean force) throws SQLException {
        return new RangeRun(run).run(mode, range, force);
    }

    /**
     * Recomputes, per set, the windows the backfill topic names ({@link AffectedRun}).
     *
     * @param skipDeleted go on where backfill records were deleted before this command read them (see {@link
     *     BackfillTopicReader#readAvailable}); otherwise such a run fails
     */
    public AffectedReport recomputeAffected(boolean force, int maxRecords, boolean skipDeleted) throws SQLException {
        return new AffectedRun(run).run(force, maxRecords, skipDeleted);
    }

    /**
     * What a run did for one metric set.
     *
     * @param windows         the window starts an {@code affected} run recomputed (empty for a range run)
     * @param events          the events its rows count (an affected run: in the windows it recomputed)
     * @param leftOut         the events left out of the set: an attribute it reads is invalid for them
     * @param attributionRows the attribution rows it staged; null when the set's attribution was not recomputed
     */
    public record SetOutcome(
            String set,
            List<Long> windows,
            long events,
            long leftOut,
            long written,
            long unchanged,
            long deleted,
            Long attributionRows) {}

    /**
     * What a range (or nightly) run did.
     *
     * @param events   the events of the range, each once (whether a set counted it or left it out)
     * @param lakeRows the lake rows of the range, copies included
     * @param sets     per metric set it computed, in the definitions' order
     */
    public record RangeReport(
            long runId,
            Mode mode,
            TimeRange range,
            boolean forced,
            long events,
            long lakeRows,
            List<SetOutcome> sets,
            Duration elapsed) {
        public long windowsWritten() {
            return sets.stream().mapToLong(SetOutcome::written).sum();
        }

        public long windowsUnchanged() {
            return sets.stream().mapToLong(SetOutcome::unchanged).sum();
        }

        public long windowsDeleted() {
            return sets.stream().mapToLong(SetOutcome::deleted).sum();
        }

        public String summary() {
            return RunOutput.rangeSummary(this);
        }

        /** The facts of {@link #summary()} for {@code --json}. */
        public ObjectNode json() {
            return RunOutput.rangeJson(this);
        }
    }

    /**
     * What an affected run did.
     *
     * @param sets    per metric set it computed: the windows it recomputed, their events and rows
     * @param pending the records this run checked and could not settle; they wait in {@code backfill_waiting}
     * @param waiting all records waiting after this run, and since when the oldest has (more than {@code pending}
     *     when more wait than one run checks)
     */
    public record AffectedReport(
            long runId,
            int recordsRead,
            int malformed,
            int expired,
            List<SetOutcome> sets,
            int pending,
            BackfillWaitingTable.Summary waiting,
            Map<String, Long> committed,
            boolean truncated,
            Duration elapsed) {
        /** The window starts any set recomputed, ascending, each once. */
        public List<Long> windows() {
            TreeSet<Long> all = new TreeSet<>();
            sets.forEach(s -> all.addAll(s.windows()));
            return List.copyOf(all);
        }

        /** The events of the recomputed windows, added over the sets (an event counts once per set). */
        public long events() {
            return sets.stream().mapToLong(SetOutcome::events).sum();
        }

        public long windowsWritten() {
            return sets.stream().mapToLong(SetOutcome::written).sum();
        }

        public long windowsUnchanged() {
            return sets.stream().mapToLong(SetOutcome::unchanged).sum();
        }

        public long windowsDeleted() {
            return sets.stream().mapToLong(SetOutcome::deleted).sum();
        }

        public String summary() {
            return RunOutput.affectedSummary(this);
        }

        /** The facts of {@link #summary()} for {@code --json}; windows are their start instants. */
        public ObjectNode json() {
            return RunOutput.affectedJson(this);
        }
    }
}
