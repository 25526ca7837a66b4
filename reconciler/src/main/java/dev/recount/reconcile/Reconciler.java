package dev.recount.reconcile;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciledWindowsTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.db.tables.ServingSettingsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowCorrectionsWritesTable;
import dev.recount.db.tables.WindowSizes;
import dev.recount.reconcile.report.ReportData;
import dev.recount.reconcile.report.ReportWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one scope: compares stream and batch inside PostgreSQL, makes the batch values final in
 * {@code window_metrics}, logs every served value that changes, and writes the report.
 *
 * <p>One run is one REPEATABLE READ transaction, so the comparison, the corrections and the report all see the
 * same stream and batch rows even while the stream job and backfills keep writing, and the corrections, the
 * diffs, the log and the run's "succeeded" become visible together or not at all. Runs of one schema are
 * serialized by an advisory lock: two runs over overlapping ranges never interleave. Each run also holds its own
 * liveness lock while it works, so the next run can tell a run whose process died (it marks it failed,
 * "abandoned: ...") from one that is still working; the dead run's transaction never committed, so nothing it
 * did is visible.
 *
 * <p>A dry run ({@link Mode#DRY_RUN}) does the same comparison, records its diffs and writes its report with
 * what it would correct, but writes nothing to {@code window_corrections} or {@code correction_log}: what
 * {@code window_metrics} serves does not change.
 */
public final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);
    /** How long a run waits for another run of the same schema to finish. */
    static final Duration LOCK_TIMEOUT = Duration.ofMinutes(10);
    /** The default of {@code reconcile.work-mem}: a day of a million keys fits (about 250 bytes each). */
    static final String WORK_MEM = "512MB";

    private static final Pattern MEMORY = Pattern.compile("[1-9][0-9]{0,8}(kB|MB|GB)");

    private static final AtomicBoolean REPORT_PRELOADED = new AtomicBoolean();
    /** Rows per list of largest differences in the report. */
    static final int REPORT_TOP = 25;

    private static final DateTimeFormatter DIR_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /** What a run needs besides the database: the day boundary zone, tolerances and where reports go. */
    /** Whether a run applies what it finds. */
    public enum Mode {
        /** Compare, finalize the batch values, log the changes, check the serving view, report. */
        APPLY,
        /** Compare and report what would be corrected; change nothing that window_metrics serves. */
        DRY_RUN
    }

    /**
     * @param workMem PostgreSQL work_mem of the run's transaction (SET LOCAL: the pooled connection keeps its
     *                default afterwards), e.g. "512MB". The run keeps one row per key of the scope in memory; a
     *                larger scope spills to temporary files, slower but still correct.
     */
    public record Settings(ZoneId zone, Tolerances tolerances, Path reportRoot, String workMem) {
        public Settings {
            Objects.requireNonNull(zone, "zone");
            Objects.requireNonNull(tolerances, "tolerances");
            Objects.requireNonNull(reportRoot, "reportRoot");
            Objects.requireNonNull(workMem, "workMem");
            if (!MEMORY.matcher(workMem).matches()) {
                throw new IllegalArgumentException(
                        "reconcile.work-mem must be a size like 512MB (kB, MB or GB), got '" + workMem + "'");
            }
        }

        public Settings(ZoneId zone, Tolerances tolerances, Path reportRoot) {
            this(zone, tolerances, reportRoot, WORK_MEM);
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
     * @throws NotCoveredException when no succeeded batch run covers the scope (the run is recorded as failed)
     */
    public RunResult reconcile(Scope scope) throws SQLException, IOException {
        return reconcile(scope, Mode.APPLY);
    }

    /**
     * Runs one reconciliation of {@code scope}; {@link Mode#DRY_RUN} applies nothing.
     *
     * @throws NotCoveredException when no succeeded batch run covers the scope (the run is recorded as failed)
     */
    public RunResult reconcile(Scope scope, Mode mode) throws SQLException, IOException {
        Objects.requireNonNull(mode, "mode");
        long started = System.nanoTime();
        preloadReportOnce();
        try (Connection conn = dataSource.getConnection()) {
            conn.setAutoCommit(true);
            long lockKey = lockKey(conn);
            progress.stage("waiting for other runs of this schema to finish");
            acquireLock(conn, lockKey);
            try {
                long runId = ReconciliationRunsTable.start(
                        conn, scope.fromMillis(), scope.toMillis(), scope.batchRunId(), mode == Mode.DRY_RUN);
                try {
                    return run(conn, scope, mode, runId, started);
                } finally {
                    releaseLiveness(conn, runId);
                }
            } finally {
                releaseLock(conn, lockKey);
            }
        }
    }

    /**
     * The first run in a JVM prepares the report's code ({@link ReportWriter#preload}) on a thread of its own while
     * its own thread waits for PostgreSQL; the report then starts warm. A failure there only costs that time back.
     */
    private static void preloadReportOnce() {
        if (!REPORT_PRELOADED.compareAndSet(false, true)) return;
        Thread preload = new Thread(
                () -> {
                    try {
                        ReportWriter.preload();
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
        Path finalDir = reportDir(runId, scope);
        Path tempDir = inProgress(finalDir);
        RunResult result;
        try {
            failAbandoned(conn, runId);
            finishInterruptedReports(conn);
            result = runInTransaction(conn, scope, mode, runId, finalDir, tempDir, started);
        } catch (SQLException | IOException | RuntimeException e) {
            deleteQuietly(tempDir);
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
                            + " transaction never committed, so what window_metrics serves is as before them",
                    runId,
                    abandoned);
        }
    }

    /** The suffix of a report directory while its run has not committed; the index skips such directories. */
    static final String IN_PROGRESS = ".partial";

    /** Where the report of {@code finalDir} is written until its run commits. */
    private static Path inProgress(Path finalDir) {
        return finalDir.resolveSibling(finalDir.getFileName() + IN_PROGRESS);
    }

    /**
     * Moves into place the report of a run killed after its commit but before its report directory was moved: the run
     * is recorded succeeded with that directory, so its report belongs there, not under the ".partial" name the index
     * skips. Any other ".partial" directory is left alone: a run of another schema that shares the report root may be
     * writing it.
     */
    private void finishInterruptedReports(Connection conn) throws SQLException {
        Path root = settings.reportRoot().toAbsolutePath().normalize();
        if (!Files.isDirectory(root)) return;
        List<Path> partials;
        try (java.util.stream.Stream<Path> entries = Files.list(root)) {
            partials = entries.filter(p -> p.getFileName().toString().startsWith("run-")
                            && p.getFileName().toString().endsWith(IN_PROGRESS)
                            && Files.isDirectory(p))
                    .toList();
        } catch (IOException e) {
            LOG.warn("cannot list {} for reports left unmoved: {}", root, e.toString());
            return;
        }
        for (Path partial : partials) {
            String name = partial.getFileName().toString();
            Path finalDir = partial.resolveSibling(name.substring(0, name.length() - IN_PROGRESS.length()));
            if (Files.exists(finalDir)) continue;
            Optional<Long> run = ReconciliationRunsTable.succeededWithReport(conn, finalDir.toString());
            if (run.isEmpty()) continue;
            try {
                Files.move(partial, finalDir, StandardCopyOption.ATOMIC_MOVE);
                LOG.warn(
                        "run {} succeeded but its report was never moved into place (killed?); moved it to {}",
                        run.get(),
                        finalDir);
            } catch (IOException e) {
                LOG.warn(
                        "cannot move the report of run {} from {} to {}: {}",
                        run.get(),
                        partial,
                        finalDir,
                        e.toString());
            }
        }
    }

    /**
     * run-&lt;id&gt;-&lt;from&gt;, made unique: run ids start again at 1 in a new database (a fresh local stack,
     * another schema) while the report directory may be kept, and an old report must never be overwritten.
     */
    private Path reportDir(long runId, Scope scope) {
        Path root = settings.reportRoot().toAbsolutePath().normalize();
        String base = "run-" + runId + "-" + DIR_TIME.format(scope.from());
        Path dir = root.resolve(base);
        for (int n = 2; Files.exists(dir) || Files.exists(inProgress(dir)); n++) {
            dir = root.resolve(base + "-" + n);
        }
        return dir;
    }

    private RunResult runInTransaction(
            Connection conn, Scope scope, Mode mode, long runId, Path finalDir, Path tempDir, long started)
            throws SQLException, IOException {
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        conn.setAutoCommit(false);
        boolean committed = false;
        try {
            // The default 4 MB makes the day-sized join and the grouping spill to disk. (Validated: a size, no quotes.)
            try (Statement st = conn.createStatement()) {
                st.execute("SET LOCAL work_mem = '" + settings.workMem() + "'");
            }
            progress.stage("checking that succeeded batch runs cover the range");
            if (scope.windowStarts() == null) requireCovered(conn, scope);
            long t0 = System.nanoTime();
            // Which windows changed since they were last reconciled: each side per window, no join of keys.
            ScopeDays days = ScopeDays.of(scope, settings.zone());
            Map<Long, ReconciledWindowsTable.Row> recorded =
                    ReconciledWindowsTable.read(conn, scope.fromMillis(), scope.toMillis());
            long finalWrites = WindowCorrectionsWritesTable.count(conn);
            // A first run fills a table of its own for its days (NewPartition), attached just before committing.
            Surveyed surveyed;
            Optional<DiffsFile> diffsFile = mode == Mode.APPLY
                            && scope.windowStarts() == null
                            && recorded.isEmpty()
                            && SnapshotSurvey.possible(dataSource)
                    ? diffsFile(runId)
                    : Optional.empty();
            if (diffsFile.isPresent()) {
                try (DiffsFile file = diffsFile.get()) {
                    surveyed = surveyBesideFirstRun(conn, scope, runId, days, finalWrites, file);
                }
            } else {
                Map<Long, ScopeSurvey.Window> asRecorded =
                        ScopeSurvey.recordedWindows(scope, recorded, finalWrites, windowsWritten(conn, scope));
                if (asRecorded != null) {
                    // Nothing wrote a window of the range since it was recorded: no row of stream or batch to read.
                    progress.stage("reading the batch's totals per campaign-day (no window written since recorded)");
                    surveyed = new Surveyed(
                            ScopeSurvey.withRecordedWindows(conn, scope, days, asRecorded),
                            false,
                            Optional.empty(),
                            null);
                } else {
                    // A step of its own: most of a rerun, which the coverage check's step used to show.
                    progress.stage("reading each window's totals from stream and batch");
                    surveyed = new Surveyed(
                            ScopeSurvey.read(conn, scope, days, recorded, finalWrites), false, Optional.empty(), null);
                }
            }
            ScopeSurvey survey = surveyed.survey();
            Optional<NewPartition> newPartition = surveyed.newPartition();
            boolean partitionTried = surveyed.partitionTried();
            requireOneWindowSize(conn, scope, survey);
            // The read side's days (daily_metrics) must be the days this run and its report use. A dry run changes
            // nothing that is served, so it leaves the recorded zone alone.
            if (mode == Mode.APPLY)
                ServingSettingsTable.recordTimeZone(conn, settings.zone(), scope.from(), scope.to());
            if (!partitionTried) {
                progress.stage(
                        mode == Mode.APPLY
                                ? "comparing stream and batch, correcting window_metrics"
                                : "comparing stream and batch (dry run)");
            }
            WindowChanges changes = WindowChanges.of(survey, recorded);
            Optional<Scope> changed = changes.changedPart(scope);
            Reconciled reconciled;
            if (surveyed.intoNewPartition() != null) {
                // Every window changed (none was recorded): the statement covered exactly the changed part.
                if (!changed.equals(Optional.of(scope)))
                    throw new IllegalStateException("run " + runId + ": nothing of " + scope.label()
                            + " was recorded, so all of it should have changed, but the survey shows " + changed);
                reconciled = surveyed.intoNewPartition();
            } else {
                if (changed.isPresent() && mode == Mode.APPLY && !partitionTried)
                    newPartition = NewPartition.create(conn, changed.get(), settings.zone(), runId);
                reconciled = changed.isPresent()
                        ? reconcileOnce(conn, changed.get(), mode, runId, newPartition)
                        : Reconciled.NOTHING;
            }
            if (newPartition.isPresent()) {
                // The new partition's statement counts only the keys only the stream has; every batch row is final too.
                reconciled = reconciled.plusKeysFinalized(batchKeys(survey, changed.get()));
                if (surveyed.intoNewPartition() == null) {
                    // Read beside the first run, the table was indexed before its statement.
                    progress.stage("indexing the new partition of window_corrections");
                    newPartition.get().index(conn, settings.workMem());
                }
            }
            copyUnchangedDiffs(conn, runId, changes);
            Comparison comparison = ComparisonAssembler.assemble(survey, DiffCounts.read(conn, runId, days));
            LOG.info(
                    "run {}: {} of {} windows changed since they were last reconciled{}",
                    runId,
                    changes.changed().size(),
                    survey.windows().size(),
                    survey.finalizedAsRecorded()
                            ? " (window_corrections not written since: its side taken as recorded)"
                            : "");
            // Attribution, in the same transaction: its diffs, corrections and log entries commit with the rest.
            progress.stage("reconciling attribution");
            AttributionReconciliation.Outcome attribution =
                    AttributionReconciliation.reconcile(conn, scope, runId, mode == Mode.APPLY);
            Map<CorrectionLogTable.Reason, Long> corrections = new EnumMap<>(CorrectionLogTable.Reason.class);
            corrections.putAll(reconciled.corrections());
            attribution.corrections().forEach((reason, n) -> corrections.merge(reason, n, Long::sum));
            long t1 = System.nanoTime();
            if (mode == Mode.APPLY) progress.stage("checking what window_metrics now serves");
            // A dry run changed nothing the view serves: what it would serve is the batch totals, by construction.
            WindowMetrics finalTotals = comparison.range().batch();
            if (mode == Mode.APPLY) {
                Map<Long, FinalizedCheck.Window> finalNow = changed.isPresent()
                        ? FinalizedCheck.check(conn, changed.get(), runId, survey, newPartition)
                        : Map.of();
                recordWindows(conn, runId, scope, survey, recorded, changes, finalNow);
            }
            long t2 = System.nanoTime();
            // Attribution is exact: any key stream and batch disagree on is beyond tolerance.
            Verdict verdict = comparison.range().counts().beyondTolerance() == 0
                            && attribution.counts().differing() == 0
                    ? Verdict.WITHIN_TOLERANCE
                    : Verdict.BEYOND_TOLERANCE;

            ReportData data = new ReportData(
                    runId,
                    scope,
                    settings.zone(),
                    clock.instant(),
                    verdict,
                    comparison,
                    finalTotals,
                    reconciled.keysFinalized(),
                    corrections,
                    settings.tolerances(),
                    mode == Mode.DRY_RUN);
            deleteQuietly(tempDir);
            progress.stage("writing the report");
            long diffRows = comparison.range().counts().differing();
            long[] written = {0};
            ReportWriter.write(
                    tempDir,
                    data,
                    REPORT_TOP,
                    sink -> ReconciliationDiffsTable.forEachOfRun(conn, runId, row -> {
                        sink.accept(row);
                        progress.rows(++written[0], diffRows);
                    }),
                    attribution.counts().compared() == 0
                            ? List.of()
                            : List.of(new AttributionSection(attribution, mode == Mode.DRY_RUN)));
            long t3 = System.nanoTime();

            if (newPartition.isPresent()) {
                progress.stage("attaching the new partition of window_corrections");
                if (!newPartition.get().attach(conn)) {
                    LOG.warn(
                            "run {}: attaching {} would have waited more than {} s for a query reading"
                                    + " window_corrections_default; its rows were moved into window_corrections"
                                    + " (its default partition) instead",
                            runId,
                            newPartition.get().name(),
                            NewPartition.ATTACH_LOCK_TIMEOUT.toSeconds());
                }
            }
            KeyCounts k = comparison.range().counts();
            ReconciliationRunsTable.succeed(
                    conn,
                    runId,
                    new ReconciliationRunsTable.Outcome(
                            verdict,
                            k.compared(),
                            k.matched(),
                            k.mismatched(),
                            k.missingInStream(),
                            k.missingInBatch(),
                            corrections.values().stream()
                                    .mapToLong(Long::longValue)
                                    .sum(),
                            ReportWriter.totalsJson(comparison.range(), finalTotals),
                            finalDir.toString()));
            progress.stage("committing");
            conn.commit();
            committed = true;
            long t4 = System.nanoTime();
            return new RunResult(
                    runId,
                    scope,
                    mode == Mode.DRY_RUN,
                    verdict,
                    comparison,
                    finalTotals,
                    reconciled.keysFinalized(),
                    corrections,
                    finalDir,
                    new RunResult.Timings(
                            Duration.ofNanos(t1 - t0),
                            Duration.ofNanos(t2 - t1),
                            Duration.ofNanos(t3 - t2),
                            Duration.ofNanos(t4 - started)));
        } finally {
            // Roll back before leaving transaction mode: setAutoCommit(true) would commit the half-done work.
            if (!committed) rollbackQuietly(conn);
            conn.setAutoCommit(true);
            conn.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    /**
     * The survey of a scope, and on a first run read beside it: whether the run tried to make a new partition, the
     * partition it made, and what the key-by-key statement into it did (null when it did not run).
     */
    private record Surveyed(
            ScopeSurvey survey,
            boolean partitionTried,
            Optional<NewPartition> newPartition,
            Reconciled intoNewPartition) {}

    /**
     * The first run of a range (nothing of it recorded, so every window in it has changed), on two connections in the
     * run's snapshot ({@link SnapshotSurvey}): the second joins stream and batch into the run's diffs ({@link
     * DiffsFile}), then reads the survey; meanwhile the run's own fills its {@link NewPartition} with the batch's rows
     * and indexes it, then loads the diffs and, from them alone, logs the values that change and hides the keys only
     * the stream has. The join and the index builds were two thirds of a first run, each on one core of two, one after
     * the other. A range without rows gets no partition, as when the survey comes first.
     */
    private Surveyed surveyBesideFirstRun(
            Connection conn, Scope scope, long runId, ScopeDays days, long finalWrites, DiffsFile diffsFile)
            throws SQLException {
        progress.stage("comparing stream and batch, correcting window_metrics");
        Sql differingKeys = ReconcileStatements.differingKeys(scope, runId, settings.tolerances());
        try (SnapshotSurvey pending = SnapshotSurvey.start(
                dataSource, conn, scope, days, finalWrites, settings.workMem(), differingKeys, diffsFile)) {
            Savepoint beforePartition = conn.setSavepoint();
            Optional<NewPartition> newPartition = NewPartition.create(conn, scope, settings.zone(), runId);
            Reconciled intoNewPartition = null;
            if (newPartition.isPresent()) {
                // While the other connection joins stream and batch: the table holds the batch's rows, and the keys
                // only the stream has, added below, are few (each then goes into both indexes as it is inserted).
                progress.stage("indexing the new partition of window_corrections");
                newPartition.get().index(conn, settings.workMem());
                progress.stage("correcting window_metrics where stream and batch disagree");
                pending.diffs().load(conn);
                intoNewPartition = reconcileFromDiffs(conn, scope, runId, newPartition.get());
            }
            // Without a table of its own (a partition covers part of the days, or a key in them is finalized), the
            // run compares again with its finalized side: the diffs read beside are not used.
            ScopeSurvey survey = pending.get();
            if (newPartition.isPresent() && survey.windows().isEmpty()) {
                conn.rollback(beforePartition);
                return new Surveyed(survey, true, Optional.empty(), null);
            }
            conn.releaseSavepoint(beforePartition);
            return new Surveyed(survey, true, newPartition, intoNewPartition);
        }
    }

    /**
     * A file for a first run's diffs ({@link #surveyBesideFirstRun}), or empty when the JVM's temporary directory cannot
     * hold one (missing, full, read-only): the run then compares and corrects on its own connection, as a run with a
     * pool of one does. Slower, but a nightly on a host whose temporary directory is unusable still reconciles.
     */
    private static Optional<DiffsFile> diffsFile(long runId) {
        try {
            return Optional.of(DiffsFile.create());
        } catch (IOException e) {
            LOG.warn(
                    "run {}: no file for the first run's diffs ({}); it compares stream and batch on its own connection"
                            + " instead, which takes longer (set java.io.tmpdir, e.g. JAVA_OPTS=-Djava.io.tmpdir=DIR,"
                            + " to a writable directory)",
                    runId,
                    e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Refuses a scope where stream and batch rows have different window sizes: no key could ever match. The survey
     * shows every window's first and last end per side, which settles the usual case (one size everywhere) without
     * reading the rows again; anything else is checked row by row, which also names the sizes.
     */
    private static void requireOneWindowSize(Connection conn, Scope scope, ScopeSurvey survey) throws SQLException {
        java.util.SortedSet<Long> batch = survey.windowSizes(false);
        if (scope.windowStarts() == null
                && batch.size() <= 1
                && (batch.isEmpty() || batch.containsAll(survey.windowSizes(true)))) {
            return;
        }
        requireOneWindowSize(conn, scope);
    }

    private static void requireOneWindowSize(Connection conn, Scope scope) throws SQLException {
        long from = scope.from().toEpochMilli();
        long to = scope.to().toEpochMilli();
        java.util.SortedSet<Long> batch = WindowSizes.in(conn, BatchWindowMetricsTable.TABLE, from, to);
        if (batch.size() > 1) {
            throw new NotCoveredException("batch_window_metrics holds windows of several sizes in [" + scope.from()
                    + ", " + scope.to() + "): recompute the range with one window.size first");
        }
        if (batch.isEmpty()) return;
        if (scope.windowStarts() != null) {
            // An affected run's windows: only they are compared, and `backfill affected` leaves out (waiting) the
            // windows where the stream ran with another size, so rows of another size between them refuse nothing.
            java.util.SortedSet<Long> other = WindowSizes.windowsHoldingOtherSizes(
                    conn, StreamWindowMetricsTable.TABLE, scope.windowStarts(), batch.first());
            if (!other.isEmpty()) {
                throw new NotCoveredException(StreamWindowMetricsTable.TABLE + " holds windows of another size than "
                        + "the batch's in the windows starting at "
                        + other.stream().map(java.time.Instant::ofEpochMilli).toList()
                        + ": the stream job ran with another window.size");
            }
            return;
        }
        Optional<String> why = WindowSizes.mismatch(conn, StreamWindowMetricsTable.TABLE, from, to, batch.first());
        if (why.isPresent()) throw new NotCoveredException(why.get());
    }

    private static void requireCovered(Connection conn, Scope scope) throws SQLException {
        List<String> gaps = new ArrayList<>();
        try (PreparedStatement ps = ReconcileStatements.uncovered(scope).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                gaps.add("[" + Instant.ofEpochMilli(rs.getLong(1)) + ", " + Instant.ofEpochMilli(rs.getLong(2)) + ")");
            }
        }
        if (!gaps.isEmpty()) {
            throw new NotCoveredException("no succeeded batch run covers " + String.join(", ", gaps)
                    + " of [" + scope.from() + ", " + scope.to() + "): run `backfill range` (or `backfill nightly`)"
                    + " for it first, then reconcile");
        }
    }

    /**
     * What the key-by-key statement did (a dry run: would do).
     *
     * @param keysFinalized keys inserted or changed in window_corrections
     * @param corrections   correction-log entries per reason
     */
    private record Reconciled(long keysFinalized, Map<CorrectionLogTable.Reason, Long> corrections) {
        /** No window changed: nothing to finalize, nothing to log. */
        static final Reconciled NOTHING = new Reconciled(0, Map.of());

        /** With {@code keys} more finalized (a new partition's batch rows, which its statement does not count). */
        Reconciled plusKeysFinalized(long keys) {
            return new Reconciled(keysFinalized + keys, corrections);
        }
    }

    /**
     * The statement that compares key by key, records the diffs and (unless a dry run) finalizes and logs, over the
     * windows that changed: see {@link ReconcileStatements#reconcile}.
     */
    private Reconciled reconcileOnce(
            Connection conn, Scope scope, Mode mode, long runId, Optional<NewPartition> newPartition)
            throws SQLException {
        return run(
                conn,
                newPartition.isPresent()
                        ? ReconcileStatements.reconcileIntoNewPartition(
                                scope, runId, settings.tolerances(), settings.zone(), newPartition.get())
                        : ReconcileStatements.reconcile(
                                scope, runId, settings.tolerances(), settings.zone(), mode == Mode.APPLY));
    }

    /** As {@link #reconcileOnce} into a new partition, with the run's diffs loaded already. */
    private static Reconciled reconcileFromDiffs(Connection conn, Scope scope, long runId, NewPartition newPartition)
            throws SQLException {
        return run(conn, ReconcileStatements.reconcileFromDiffsIntoNewPartition(scope, runId, newPartition));
    }

    private static Reconciled run(Connection conn, Sql statement) throws SQLException {
        Map<CorrectionLogTable.Reason, Long> corrections = new EnumMap<>(CorrectionLogTable.Reason.class);
        long keysFinalized = 0;
        try (PreparedStatement ps = statement.prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                if (ReconcileStatements.FINALIZED.equals(rs.getString("what"))) keysFinalized = rs.getLong("n");
                else corrections.put(CorrectionLogTable.Reason.of(rs.getString("reason")), rs.getLong("n"));
            }
        }
        return new Reconciled(keysFinalized, corrections);
    }

    /** How many batch rows the survey found in the windows of {@code scope}. */
    private static long batchKeys(ScopeSurvey survey, Scope scope) {
        java.util.function.LongPredicate covered = scope.coversWindow();
        return survey.windows().values().stream()
                .filter(w -> covered.test(w.windowStartMillis()))
                .mapToLong(w -> w.batch().keys())
                .sum();
    }

    /** The diffs of the windows nothing changed in since their last run: that run's, copied (one statement). */
    private void copyUnchangedDiffs(Connection conn, long runId, WindowChanges changes) throws SQLException {
        if (changes.unchanged().isEmpty()) return;
        List<Long> windows = new ArrayList<>(changes.unchanged().keySet());
        List<Long> fromRuns = windows.stream().map(changes.unchanged()::get).toList();
        try (PreparedStatement ps = ReconcileStatements.copyDiffs(runId, windows, fromRuns, settings.tolerances())
                .prepare(conn)) {
            ps.executeUpdate();
        }
    }

    /**
     * Records, for every window of the survey, what this run saw and left, for the next run to compare with: the
     * stream and batch as surveyed, the finalized rows as they are now ({@code finalNow}, read by the check of the
     * windows this run wrote; the others it did not touch), this run as the one whose diffs hold, the row hash
     * the fingerprints were computed with, and how many statements have written window_corrections by now.
     */
    /**
     * Records every window of the scope as this run read and left it, and forgets what {@code window_writes} said of
     * them: the run read them in the snapshot in which it deletes those rows. A window recorded before that neither
     * side nor window_corrections holds rows of any more is recorded empty.
     */
    private static void recordWindows(
            Connection conn,
            long runId,
            Scope scope,
            ScopeSurvey survey,
            Map<Long, ReconciledWindowsTable.Row> recorded,
            WindowChanges changes,
            Map<Long, FinalizedCheck.Window> finalNow)
            throws SQLException {
        // Counted after this run's own writes: the next run finds the same number unless something wrote since.
        long finalWrites = WindowCorrectionsWritesTable.count(conn);
        List<ReconciledWindowsTable.Row> rows = new ArrayList<>();
        for (ScopeSurvey.Window w : survey.windows().values()) {
            ReconciledWindowsTable.Side finalized = changes.unchanged().containsKey(w.windowStartMillis())
                    ? w.finalized()
                    : finalNow.getOrDefault(w.windowStartMillis(), FinalizedCheck.Window.NONE)
                            .all();
            rows.add(new ReconciledWindowsTable.Row(
                    w.windowStartMillis(),
                    w.stream(),
                    w.batch(),
                    finalized,
                    runId,
                    ReconcileStatements.FINGERPRINT_VERSION,
                    finalWrites,
                    new ReconciledWindowsTable.Survey(
                            w.streamEnds().minMillis(),
                            w.streamEnds().maxMillis(),
                            w.batchEnds().minMillis(),
                            w.batchEnds().maxMillis(),
                            w.batchRows().sums())));
        }
        LongPredicate covered = scope.coversWindow();
        for (long w : recorded.keySet()) {
            if (!covered.test(w) || survey.windows().containsKey(w)) continue;
            rows.add(new ReconciledWindowsTable.Row(
                    w,
                    ReconciledWindowsTable.Side.EMPTY,
                    ReconciledWindowsTable.Side.EMPTY,
                    ReconciledWindowsTable.Side.EMPTY,
                    runId,
                    ReconcileStatements.FINGERPRINT_VERSION,
                    finalWrites,
                    new ReconciledWindowsTable.Survey(0, 0, 0, 0, WindowMetrics.ZERO)));
        }
        ReconciledWindowsTable.upsert(conn, rows);
        try (PreparedStatement ps =
                ReconcileStatements.forgetWindowWrites(scope).prepare(conn)) {
            ps.executeUpdate();
        }
    }

    /** Whether {@code window_writes} names a window of the scope ({@link ReconcileStatements#windowsWritten}). */
    private static boolean windowsWritten(Connection conn, Scope scope) throws SQLException {
        try (PreparedStatement ps = ReconcileStatements.windowsWritten(scope).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /** One advisory lock per schema: reconciliations of different schemas (environments, tests) never wait for each other. */
    private static long lockKey(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT hashtextextended('recount.reconcile.' || current_schema(), 0)")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void acquireLock(Connection conn, long key) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("SET lock_timeout = '" + LOCK_TIMEOUT.toMillis() + "ms'");
            try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_lock(?)")) {
                ps.setLong(1, key);
                ps.execute();
            } catch (SQLException e) {
                if ("55P03".equals(e.getSQLState())) {
                    throw new IllegalStateException(
                            "another reconciliation of this schema is still running after " + LOCK_TIMEOUT.toMinutes()
                                    + " minutes; try again later",
                            e);
                }
                throw e;
            } finally {
                st.execute("RESET lock_timeout");
            }
        }
    }

    private static void releaseLock(Connection conn, long key) {
        try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);
            ps.execute();
        } catch (SQLException e) {
            // The lock is session-scoped: closing the connection (the pool evicts a broken one) releases it too.
            LOG.warn("could not release the reconcile lock: {}", e.getMessage());
        }
    }

    private static void releaseLiveness(Connection conn, long runId) {
        try {
            ReconciliationRunsTable.releaseLiveness(conn, runId);
        } catch (SQLException e) {
            // Session-scoped as well: closing the connection releases it.
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

    private static void rollbackQuietly(Connection conn) {
        try {
            conn.rollback();
        } catch (SQLException e) {
            LOG.warn("rollback failed: {}", e.getMessage());
        }
    }

    private static void deleteQuietly(Path dir) {
        if (!Files.exists(dir)) return;
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warn("could not delete {}: {}", dir, e.getMessage());
        }
    }
}
