package dev.recount.reconcile;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciledWindowsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.db.tables.WindowCorrectionsWritesTable;
import dev.recount.db.tables.WindowSizes;
import dev.recount.reconcile.report.Labels;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.LongPredicate;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole of a run's work on one metric set, in the run's transaction, on the set's own objects: the survey of its
 * scope, which windows changed since they were last reconciled, the key-by-key statement over those (diffs,
 * corrections, correction log; on a first run into a table of its own, {@link NewPartition}, with the join beside on a
 * second connection, {@link SnapshotSurvey}), the unchanged windows' diffs copied, every group's totals, attribution
 * where the set has its tables, the check of what its serving view now serves, and the record of every window for
 * the next run. What is left for just before committing (attaching the new partition) is returned with the result.
 */
final class SetReconciliation {
    private static final Logger LOG = LoggerFactory.getLogger(SetReconciliation.class);

    /**
     * What the set's part of the run did.
     *
     * @param newPartition   the first run's table of its own, to attach just before committing
     * @param reconcileNanos the survey, the key-by-key statement, the copies and attribution
     * @param checkNanos     the check of the serving view and the record of the windows
     */
    record Done(SetResult result, Optional<NewPartition> newPartition, long reconcileNanos, long checkNanos) {}

    private final DataSource dataSource;
    private final Reconciler.Settings settings;
    private final RunProgress progress;
    private final String stagePrefix;
    private final MetricSet set;
    private final SetTables tables;
    private final ReconcileStatements sql;
    private final ReconciledWindowsTable reconciledWindows;
    private final WindowCorrectionsWritesTable correctionWrites;

    /**
     * @param stagePrefix put before every step the run shows, to tell the sets apart ("" when the run has one set)
     */
    SetReconciliation(
            DataSource dataSource,
            Reconciler.Settings settings,
            RunProgress progress,
            String stagePrefix,
            MetricSet set) {
        this.dataSource = dataSource;
        this.settings = settings;
        this.progress = progress;
        this.stagePrefix = stagePrefix;
        this.set = set;
        this.tables = new SetTables(set);
        this.sql = new ReconcileStatements(tables);
        this.reconciledWindows = new ReconciledWindowsTable(tables);
        this.correctionWrites = new WindowCorrectionsWritesTable(tables);
    }

    ReconcileStatements statements() {
        return sql;
    }

    private void stage(String name) {
        progress.stage(stagePrefix + name);
    }

    /**
     * Reconciles the set over {@code scope} (the set's part of the run's scope) in {@code conn}'s transaction.
     *
     * @throws NotCoveredException when the set's stream and batch rows in the scope have different window sizes
     */
    Done reconcile(Connection conn, Scope scope, Reconciler.Mode mode, long runId, ScopeDays days) throws SQLException {
        long t0 = System.nanoTime();
        // Which windows changed since they were last reconciled: each side per window, no join of keys.
        Map<Long, ReconciledWindowsTable.Row> recorded =
                reconciledWindows.read(conn, scope.fromMillis(), scope.toMillis());
        Surveyed surveyed = survey(conn, scope, mode, runId, days, recorded);
        ScopeSurvey survey = surveyed.survey();
        Optional<NewPartition> newPartition = surveyed.newPartition();
        boolean partitionTried = surveyed.partitionTried();
        requireOneWindowSize(conn, scope, survey);
        if (!partitionTried) {
            stage(
                    mode == Reconciler.Mode.APPLY
                            ? "comparing stream and batch, correcting " + tables.windowMetrics()
                            : "comparing stream and batch (dry run)");
        }
        WindowChanges changes = WindowChanges.of(survey, recorded);
        Optional<Scope> changed = changes.changedPart(scope);
        Reconciled reconciled;
        if (surveyed.intoNewPartition() != null) {
            // Every window changed (none was recorded): the statement covered exactly the changed part.
            if (!changed.equals(Optional.of(scope)))
                throw new IllegalStateException("run " + runId + ": nothing of " + scope.label() + " was recorded for"
                        + " set " + set.name() + ", so all of it should have changed, but the survey shows " + changed);
            reconciled = surveyed.intoNewPartition();
        } else {
            if (changed.isPresent() && mode == Reconciler.Mode.APPLY && !partitionTried)
                newPartition = NewPartition.create(conn, tables, changed.get(), settings.zone(), runId);
            reconciled = changed.isPresent()
                    ? reconcileOnce(conn, changed.get(), mode, runId, newPartition)
                    : Reconciled.NOTHING;
        }
        if (newPartition.isPresent()) {
            // The new partition's statement counts only the keys only the stream has; every batch row is final too.
            reconciled = reconciled.plusKeysFinalized(batchKeys(survey, changed.get()));
            if (surveyed.intoNewPartition() == null) {
                // Read beside the first run, the table was indexed before its statement.
                stage("indexing the new partition of " + tables.windowCorrections());
                newPartition.get().index(conn, settings.workMem());
            }
        }
        copyUnchangedDiffs(conn, runId, changes);
        Comparison comparison = ComparisonAssembler.assemble(survey, DiffCounts.read(conn, sql, runId, days));
        LOG.info(
                "run {}, set {}: {} of {} windows changed since they were last reconciled{}",
                runId,
                set.name(),
                changes.changed().size(),
                survey.windows().size(),
                survey.finalizedAsRecorded()
                        ? " (" + tables.windowCorrections() + " not written since: its side taken as recorded)"
                        : "");
        // Attribution, in the same transaction: its diffs, corrections and log entries commit with the rest.
        AttributionReconciliation.Outcome attribution = AttributionReconciliation.Outcome.NONE;
        if (AttributionReconciliation.tablesExist(conn, tables)) {
            stage("reconciling attribution");
            attribution =
                    AttributionReconciliation.reconcile(conn, tables, scope, runId, mode == Reconciler.Mode.APPLY);
        }
        Map<CorrectionLogTable.Reason, Long> corrections = new EnumMap<>(CorrectionLogTable.Reason.class);
        corrections.putAll(reconciled.corrections());
        attribution.corrections().forEach((reason, n) -> corrections.merge(reason, n, Long::sum));
        long t1 = System.nanoTime();
        if (mode == Reconciler.Mode.APPLY) stage("checking what " + tables.windowMetrics() + " now serves");
        // A dry run changed nothing the view serves: what it would serve is the batch totals, by construction.
        MeasureValues finalTotals = comparison.range().batch();
        if (mode == Reconciler.Mode.APPLY) {
            Map<Long, FinalizedCheck.Window> finalNow = changed.isPresent()
                    ? FinalizedCheck.check(conn, sql, changed.get(), runId, survey, newPartition)
                    : Map.of();
            recordWindows(conn, runId, scope, survey, recorded, changes, finalNow);
        }
        long t2 = System.nanoTime();
        // Attribution is exact: any key stream and batch disagree on is beyond tolerance.
        Verdict verdict = comparison.range().counts().beyondTolerance() == 0
                        && attribution.counts().differing() == 0
                ? Verdict.WITHIN_TOLERANCE
                : Verdict.BEYOND_TOLERANCE;
        SetResult result = new SetResult(
                set, scope, verdict, comparison, finalTotals, reconciled.keysFinalized(), corrections, attribution);
        return new Done(result, newPartition, t1 - t0, t2 - t1);
    }

    /**
     * The survey of the set's scope, read the cheapest way the record allows: beside a first run's statement (nothing
     * recorded, applying: see {@link #surveyBesideFirstRun}), taken as recorded when nothing wrote a window of the
     * scope since ({@link ScopeSurvey#recordedWindows}), else read from stream, batch and (unless known) the
     * finalized rows.
     */
    private Surveyed survey(
            Connection conn,
            Scope scope,
            Reconciler.Mode mode,
            long runId,
            ScopeDays days,
            Map<Long, ReconciledWindowsTable.Row> recorded)
            throws SQLException {
        long finalWrites = correctionWrites.count(conn);
        // A first run fills a table of its own for its days (NewPartition), attached just before committing.
        Optional<DiffsFile> diffsFile = mode == Reconciler.Mode.APPLY
                        && scope.windowStarts() == null
                        && recorded.isEmpty()
                        && SnapshotSurvey.possible(dataSource)
                ? diffsFile(runId)
                : Optional.empty();
        if (diffsFile.isPresent()) {
            try (DiffsFile file = diffsFile.get()) {
                return surveyBesideFirstRun(conn, scope, runId, days, finalWrites, file);
            }
        }
        Map<Long, ScopeSurvey.Window> asRecorded = ScopeSurvey.recordedWindows(
                scope,
                recorded,
                finalWrites,
                windowsWritten(conn, scope),
                set.measures().size());
        if (asRecorded != null) {
            // Nothing wrote a window of the range since it was recorded: no row of stream or batch to read.
            stage("reading the batch's totals per " + Labels.dayGroup(set) + " (no window written since recorded)");
            return new Surveyed(
                    ScopeSurvey.withRecordedWindows(conn, sql, scope, days, asRecorded), false, Optional.empty(), null);
        }
        // A step of its own: most of a rerun, which the coverage check's step used to show.
        stage("reading each window's totals from stream and batch");
        return new Surveyed(
                ScopeSurvey.read(conn, sql, scope, days, recorded, finalWrites), false, Optional.empty(), null);
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
        stage("comparing stream and batch, correcting " + tables.windowMetrics());
        Sql differingKeys = sql.differingKeys(scope, runId);
        try (SnapshotSurvey pending = SnapshotSurvey.start(
                dataSource, conn, sql, scope, days, finalWrites, settings.workMem(), differingKeys, diffsFile)) {
            Savepoint beforePartition = conn.setSavepoint();
            Optional<NewPartition> newPartition = NewPartition.create(conn, tables, scope, settings.zone(), runId);
            Reconciled intoNewPartition = null;
            if (newPartition.isPresent()) {
                // While the other connection joins stream and batch: the table holds the batch's rows, and the keys
                // only the stream has, added below, are few (each then goes into both indexes as it is inserted).
                stage("indexing the new partition of " + tables.windowCorrections());
                newPartition.get().index(conn, settings.workMem());
                stage("correcting " + tables.windowMetrics() + " where stream and batch disagree");
                pending.diffs().load(conn, sql.diffsTable());
                intoNewPartition = run(conn, sql.reconcileFromDiffsIntoNewPartition(scope, runId, newPartition.get()));
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
     * Refuses a scope where the set's stream and batch rows have different window sizes: no key could ever match. The
     * survey shows every window's first and last end per side, which settles the usual case (one size everywhere)
     * without reading the rows again; anything else is checked row by row, which also names the sizes.
     */
    private void requireOneWindowSize(Connection conn, Scope scope, ScopeSurvey survey) throws SQLException {
        SortedSet<Long> batch = survey.windowSizes(false);
        if (scope.windowStarts() == null
                && batch.size() <= 1
                && (batch.isEmpty() || batch.containsAll(survey.windowSizes(true)))) {
            return;
        }
        requireOneWindowSize(conn, scope);
    }

    private void requireOneWindowSize(Connection conn, Scope scope) throws SQLException {
        long from = scope.from().toEpochMilli();
        long to = scope.to().toEpochMilli();
        SortedSet<Long> batch = WindowSizes.in(conn, tables.batchWindowMetrics(), from, to);
        if (batch.size() > 1) {
            throw new NotCoveredException(tables.batchWindowMetrics() + " holds windows of several sizes in ["
                    + scope.from() + ", " + scope.to() + "): recompute the range with one window size first");
        }
        if (batch.isEmpty()) return;
        if (scope.windowStarts() != null) {
            // An affected run's windows: only they are compared, and `backfill affected` leaves out (waiting) the
            // windows where the stream ran with another size, so rows of another size between them refuse nothing.
            SortedSet<Long> other = WindowSizes.windowsHoldingOtherSizes(
                    conn, tables.streamWindowMetrics(), scope.windowStarts(), batch.first());
            if (!other.isEmpty()) {
                throw new NotCoveredException(tables.streamWindowMetrics() + " holds windows of another size than "
                        + "the batch's in the windows starting at "
                        + other.stream().map(Instant::ofEpochMilli).toList()
                        + ": the stream job ran with another window size");
            }
            return;
        }
        Optional<String> why = WindowSizes.mismatch(conn, tables.streamWindowMetrics(), from, to, batch.first());
        if (why.isPresent()) throw new NotCoveredException(why.get());
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
            Connection conn, Scope scope, Reconciler.Mode mode, long runId, Optional<NewPartition> newPartition)
            throws SQLException {
        return run(
                conn,
                newPartition.isPresent()
                        ? sql.reconcileIntoNewPartition(scope, runId, newPartition.get())
                        : sql.reconcile(scope, runId, mode == Reconciler.Mode.APPLY));
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
        LongPredicate covered = scope.coversWindow();
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
        try (PreparedStatement ps = sql.copyDiffs(runId, windows, fromRuns).prepare(conn)) {
            ps.executeUpdate();
        }
    }

    /**
     * Records every window of the scope as this run read and left it, for the next run to compare with: the stream
     * and batch as surveyed, the finalized rows as they are now ({@code finalNow}, read by the check of the windows
     * this run wrote; the others it did not touch), this run as the one whose diffs hold, the row hash the
     * fingerprints were computed with, and how many statements have written the set's window_corrections by now. It
     * forgets what the set's {@code window_writes} said of them: the run read them in the snapshot in which it deletes
     * those rows. A window recorded before that neither side nor window_corrections holds rows of any more is recorded
     * empty.
     */
    private void recordWindows(
            Connection conn,
            long runId,
            Scope scope,
            ScopeSurvey survey,
            Map<Long, ReconciledWindowsTable.Row> recorded,
            WindowChanges changes,
            Map<Long, FinalizedCheck.Window> finalNow)
            throws SQLException {
        // Counted after this run's own writes: the next run finds the same number unless something wrote since.
        long finalWrites = correctionWrites.count(conn);
        FinalizedCheck.Window none = FinalizedCheck.Window.none(survey.measures());
        List<ReconciledWindowsTable.Row> rows = new ArrayList<>();
        for (ScopeSurvey.Window w : survey.windows().values()) {
            ReconciledWindowsTable.Side finalized = changes.unchanged().containsKey(w.windowStartMillis())
                    ? w.finalized()
                    : finalNow.getOrDefault(w.windowStartMillis(), none).all();
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
                    new ReconciledWindowsTable.Survey(0, 0, 0, 0, MeasureValues.zeros(survey.measures()))));
        }
        reconciledWindows.upsert(conn, rows);
        try (PreparedStatement ps = sql.forgetWindowWrites(scope).prepare(conn)) {
            ps.executeUpdate();
        }
    }

    /** Whether the set's {@code window_writes} names a window of the scope ({@link ReconcileStatements#windowsWritten}). */
    private boolean windowsWritten(Connection conn, Scope scope) throws SQLException {
        try (PreparedStatement ps = sql.windowsWritten(scope).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
