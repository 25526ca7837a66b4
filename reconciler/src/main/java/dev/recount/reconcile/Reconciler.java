package dev.recount.reconcile;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.MetricSetRegistry;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.reconcile.report.ReportWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one scope for every metric set of the definitions it is given (or the sets a batch run's scope names):
 * compares stream and batch inside PostgreSQL, makes the batch values final in each set's serving view, logs every
 * served value that changes, and writes the report. This class is the run's lifecycle: the schema's lock, the run's
 * {@code reconciliation_runs} row and liveness lock, a run whose process died marked failed, the report directory;
 * the work itself is one transaction ({@link RunTransaction}) of one part per set ({@link SetReconciliation}).
 *
 * <p>One run is one REPEATABLE READ transaction, so the comparisons, the corrections and the report all see the
 * same stream and batch rows even while the stream job and backfills keep writing, and the corrections, the
 * diffs, the log and the run's "succeeded" become visible together or not at all. Runs of one schema are
 * serialized by an advisory lock ({@link SchemaLock}): two runs over overlapping ranges never interleave. Each run
 * also holds its own liveness lock while it works, so the next run can tell a run whose process died (it marks it
 * failed, "abandoned: ...") from one that is still working; the dead run's transaction never committed, so nothing it
 * did is visible.
 *
 * <p>A dry run ({@link Mode#DRY_RUN}) does the same comparison, records its diffs and writes its report with
 * what it would correct, but writes nothing to any set's {@code window_corrections} or {@code correction_log}: what
 * the serving views serve does not change.
 */
public final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);
    /** The default of {@code reconcile.work-mem}: a day of a million keys fits (about 250 bytes each). */
    static final String WORK_MEM = "512MB";

    private static final Pattern MEMORY = Pattern.compile("[1-9][0-9]{0,8}(kB|MB|GB)");

    private static final AtomicBoolean REPORT_PRELOADED = new AtomicBoolean();

    /** Whether a run applies what it finds. */
    public enum Mode {
        /** Compare, finalize the batch values, log the changes, check the serving views, report. */
        APPLY,
        /** Compare and report what would be corrected; change nothing that a serving view serves. */
        DRY_RUN
    }

    /**
     * What a run needs besides the database.
     *
     * @param zone    where days start, for the report's days and the read side's daily rollups
     * @param sets    the metric sets a run reconciles (each with its tolerances), e.g. {@code --set NAME}'s one
     * @param workMem PostgreSQL work_mem of the run's transaction (SET LOCAL: the pooled connection keeps its
     *                default afterwards), e.g. "512MB". The run keeps one row per key of the scope in memory; a
     *                larger scope spills to temporary files, slower but still correct.
     */
    public record Settings(ZoneId zone, MetricSets sets, Path reportRoot, String workMem) {
        public Settings {
            Objects.requireNonNull(zone, "zone");
            Objects.requireNonNull(sets, "sets");
            Objects.requireNonNull(reportRoot, "reportRoot");
            Objects.requireNonNull(workMem, "workMem");
            if (sets.sets().isEmpty()) throw new IllegalArgumentException(sets.source() + " declares no metric set");
            if (!MEMORY.matcher(workMem).matches()) {
                throw new IllegalArgumentException(
                        "reconcile.work-mem must be a size like 512MB (kB, MB or GB), got '" + workMem + "'");
            }
        }

        public Settings(ZoneId zone, MetricSets sets, Path reportRoot) {
            this(zone, sets, reportRoot, WORK_MEM);
        }
    }

    private final DataSource dataSource;
    private final Settings settings;
    private final Clock clock;
    private final RunProgress progress;

    public Reconciler(DataSource dataSource, Settings settings, Clock clock) {
        this(dataSource, settings, clock, RunProgress.NONE);
    }

    private Reconciler(DataSource dataSource, Settings settings, Clock clock, RunProgress progress) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /** This reconciler, telling {@code progress} each step of a run (and the report's rows as they are written). */
    public Reconciler withProgress(RunProgress progress) {
        return new Reconciler(dataSource, settings, clock, progress);
    }

    /**
     * Runs one reconciliation of {@code scope} and applies it.
     *
     * @throws NotCoveredException when no succeeded batch run covers the scope for any of its sets (the run is
     *     recorded as failed)
     */
    public RunResult reconcile(Scope scope) throws SQLException, IOException {
        return reconcile(scope, Mode.APPLY);
    }

    /**
     * Runs one reconciliation of {@code scope}; {@link Mode#DRY_RUN} applies nothing.
     *
     * @throws NotCoveredException when no succeeded batch run covers the scope for any of its sets (the run is
     *     recorded as failed), or the scope names no set of the definitions (nothing is recorded)
     * @throws dev.recount.core.config.ConfigException when a set has no tables in the schema yet, or its tables were
     *     made for another definition (nothing is recorded: run migrate)
     */
    public RunResult reconcile(Scope scope, Mode mode) throws SQLException, IOException {
        Objects.requireNonNull(mode, "mode");
        long started = System.nanoTime();
        List<String> sets = RunTransaction.setsOf(settings, scope).stream()
                .map(MetricSet::name)
                .toList();
        if (sets.isEmpty()) {
            throw new NotCoveredException(scope.label() + " covers none of the metric sets "
                    + settings.sets().sets().stream().map(MetricSet::name).toList() + " (it covers " + scope.sets()
                    + ")");
        }
        preloadReportOnce(settings.sets().sets().get(0));
        try (Connection conn = dataSource.getConnection()) {
            conn.setAutoCommit(true);
            // Rows are compared only under the definition their tables were made for (migrate's registry, V26).
            MetricSetRegistry.check(conn, settings.sets());
            progress.stage("waiting for other runs of this schema to finish");
            try (SchemaLock lock = SchemaLock.acquire(conn)) {
                long runId = ReconciliationRunsTable.start(
                        conn, scope.fromMillis(), scope.toMillis(), scope.batchRunId(), mode == Mode.DRY_RUN, sets);
                try {
                    return run(conn, scope, mode, runId, started);
                } finally {
                    releaseLiveness(conn, runId);
                }
            }
        }
    }

    /**
     * The first run in a JVM prepares the report's code ({@link ReportWriter#preload}) on a thread of its own while
     * its own thread waits for PostgreSQL; the report then starts warm. A failure there only costs that time back.
     */
    private static void preloadReportOnce(MetricSet set) {
        if (!REPORT_PRELOADED.compareAndSet(false, true)) return;
        Thread preload = new Thread(
                () -> {
                    try {
                        ReportWriter.preload(set);
                    } catch (RuntimeException e) {
                        LOG.debug("could not prepare the report's code ahead: {}", e.toString());
                    }
                },
                "recount-report-preload");
        preload.setDaemon(true);
        preload.start();
    }

    private RunResult run(Connection conn, Scope scope, Mode mode, long runId, long started)
            throws SQLException, IOException {
        LOG.info(
                "reconciliation run {} started for {} [{}, {}){}",
                runId,
                scope.label(),
                scope.from(),
                scope.to(),
                mode == Mode.DRY_RUN ? " (dry run: nothing is applied)" : "");
        ReportDirectory reports = new ReportDirectory(settings.reportRoot());
        Path finalDir = reports.forRun(runId, scope);
        Path tempDir = ReportDirectory.inProgress(finalDir);
        RunResult result;
        try {
            failAbandoned(conn, runId);
            reports.finishInterrupted(conn);
            result = new RunTransaction(dataSource, settings, clock, progress)
                    .run(conn, scope, mode, runId, finalDir, tempDir, started);
        } catch (SQLException | IOException | RuntimeException e) {
            ReportDirectory.deleteQuietly(tempDir);
            recordFailure(conn, runId, e);
            throw e;
        }
        try {
            Files.move(tempDir, finalDir, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IOException(
                    "run " + runId + " succeeded" + (mode == Mode.APPLY ? " and its corrections are committed" : "")
                            + ", but its report could not be moved from " + tempDir + " to " + finalDir + ": "
                            + e.getMessage(),
                    e);
        }
        LOG.info(
                "reconciliation run {} succeeded: {}, {} values {}, report {}",
                runId,
                result.verdict().wireName(),
                result.valuesCorrected(),
                mode == Mode.APPLY ? "corrected" : "would be corrected (dry run)",
                finalDir);
        return result;
    }

    /**
     * Marks failed the runs whose process died without finishing: without that they would stay "running" forever.
     * Runs of a schema are serialized by the lock this run holds, so any other run still marked running is dead;
     * the liveness lock is what proves it.
     */
    private static void failAbandoned(Connection conn, long runId) throws SQLException {
        List<Long> abandoned = ReconciliationRunsTable.failAbandoned(conn, runId);
        if (!abandoned.isEmpty()) {
            LOG.warn(
                    "run {}: marked runs {} failed: their process ended without finishing (killed?); their"
                            + " transaction never committed, so what the serving views serve is as before them",
                    runId,
                    abandoned);
        }
    }

    private static void releaseLiveness(Connection conn, long runId) {
        try {
            ReconciliationRunsTable.releaseLiveness(conn, runId);
        } catch (SQLException e) {
            // Session-scoped: closing the connection releases it.
            LOG.warn("could not release the liveness lock of run {}: {}", runId, e.getMessage());
        }
    }

    private static void recordFailure(Connection conn, long runId, Exception cause) {
        try {
            conn.setAutoCommit(true);
            ReconciliationRunsTable.fail(conn, runId, oneLine(cause));
        } catch (SQLException | RuntimeException e) {
            LOG.error("reconciliation run {} failed and could not be marked failed: {}", runId, e.getMessage());
        }
    }

    static String oneLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return m.strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
