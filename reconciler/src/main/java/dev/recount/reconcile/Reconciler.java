package dev.recount.reconcile;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.db.tables.Timestamps;
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
 * serialized by an advisory lock: two runs over overlapping ranges never interleave.
 */
public final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);
    /** How long a run waits for another run of the same schema to finish. */
    static final Duration LOCK_TIMEOUT = Duration.ofMinutes(10);
    /** work_mem for the run's transaction (SET LOCAL: the pooled connection keeps its default afterwards). */
    static final String WORK_MEM = "128MB";
    /** Rows per list of largest differences in the report. */
    static final int REPORT_TOP = 25;
    private static final DateTimeFormatter DIR_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /** What a run needs besides the database: the day boundary zone, tolerances and where reports go. */
    public record Settings(ZoneId zone, Tolerances tolerances, Path reportRoot) {
        public Settings {
            Objects.requireNonNull(zone, "zone");
            Objects.requireNonNull(tolerances, "tolerances");
            Objects.requireNonNull(reportRoot, "reportRoot");
        }
    }

    private final DataSource dataSource;
    private final Settings settings;
    private final Clock clock;

    public Reconciler(DataSource dataSource, Settings settings, Clock clock) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Runs one reconciliation of {@code scope}.
     *
     * @throws NotCoveredException when no succeeded batch run covers the scope (the run is recorded as failed)
     */
    public RunResult reconcile(Scope scope) throws SQLException, IOException {
        long started = System.nanoTime();
        try (Connection conn = dataSource.getConnection()) {
            conn.setAutoCommit(true);
            long lockKey = lockKey(conn);
            acquireLock(conn, lockKey);
            try {
                long runId = ReconciliationRunsTable.start(conn, scope.fromMillis(), scope.toMillis(), scope.batchRunId());
                LOG.info("reconciliation run {} started for {} [{}, {})", runId, scope.label(), scope.from(), scope.to());
                Path finalDir = reportDir(runId, scope);
                Path tempDir = finalDir.resolveSibling(finalDir.getFileName() + ".partial");
                RunResult result;
                try {
                    result = runInTransaction(conn, scope, runId, finalDir, tempDir, started);
                } catch (SQLException | IOException | RuntimeException e) {
                    deleteQuietly(tempDir);
                    recordFailure(conn, runId, e);
                    throw e;
                }
                try {
                    Files.move(tempDir, finalDir, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    throw new IOException("run " + runId + " succeeded and its corrections are committed, but its report"
                            + " could not be moved from " + tempDir + " to " + finalDir + ": " + e.getMessage(), e);
                }
                LOG.info("reconciliation run {} succeeded: {}, {} values corrected, report {}", runId,
                        result.verdict().wireName(), result.valuesCorrected(), finalDir);
                return result;
            } finally {
                releaseLock(conn, lockKey);
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
        for (int n = 2; Files.exists(dir) || Files.exists(dir.resolveSibling(dir.getFileName() + ".partial")); n++) {
            dir = root.resolve(base + "-" + n);
        }
        return dir;
    }

    private RunResult runInTransaction(Connection conn, Scope scope, long runId, Path finalDir, Path tempDir,
                                       long started) throws SQLException, IOException {
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        conn.setAutoCommit(false);
        boolean committed = false;
        try {
            // The default 4 MB makes the day-sized joins and the grouping sort spill to disk.
            try (Statement st = conn.createStatement()) {
                st.execute("SET LOCAL work_mem = '" + WORK_MEM + "'");
            }
            if (scope.windowStarts() == null) requireCovered(conn, scope);
            long t0 = System.nanoTime();
            Comparison comparison = compare(conn, scope, runId);
            long t1 = System.nanoTime();
            Map<CorrectionLogTable.Reason, Long> corrections = new EnumMap<>(CorrectionLogTable.Reason.class);
            long keysFinalized = correct(conn, scope, runId, corrections);
            WindowMetrics finalTotals = verifyServed(conn, scope, comparison.range());
            long t2 = System.nanoTime();
            Verdict verdict = comparison.range().counts().beyondTolerance() == 0
                    ? Verdict.WITHIN_TOLERANCE : Verdict.BEYOND_TOLERANCE;

            ReportData data = new ReportData(runId, scope, settings.zone(), clock.instant(), verdict, comparison,
                    finalTotals, keysFinalized, corrections, settings.tolerances(),
                    ReconciliationDiffsTable.largest(conn, runId, ReconciliationDiffsTable.Status.MISMATCH, REPORT_TOP),
                    ReconciliationDiffsTable.largest(conn, runId, ReconciliationDiffsTable.Status.MISSING_IN_STREAM, REPORT_TOP),
                    ReconciliationDiffsTable.largest(conn, runId, ReconciliationDiffsTable.Status.MISSING_IN_BATCH, REPORT_TOP));
            deleteQuietly(tempDir);
            ReportWriter.write(tempDir, data, sink -> ReconciliationDiffsTable.forEachOfRun(conn, runId, sink));
            long t3 = System.nanoTime();

            KeyCounts k = comparison.range().counts();
            ReconciliationRunsTable.succeed(conn, runId, new ReconciliationRunsTable.Outcome(verdict, k.compared(),
                    k.matched(), k.mismatched(), k.missingInStream(), k.missingInBatch(),
                    corrections.values().stream().mapToLong(Long::longValue).sum(),
                    ReportWriter.totalsJson(comparison.range(), finalTotals), finalDir.toString()));
            conn.commit();
            committed = true;
            long t4 = System.nanoTime();
            return new RunResult(runId, scope, verdict, comparison, finalTotals, keysFinalized, corrections, finalDir,
                    new RunResult.Timings(Duration.ofNanos(t1 - t0), Duration.ofNanos(t2 - t1), Duration.ofNanos(t3 - t2),
                            Duration.ofNanos(t4 - started)));
        } finally {
            // Roll back before leaving transaction mode: setAutoCommit(true) would commit the half-done work.
            if (!committed) rollbackQuietly(conn);
            conn.setAutoCommit(true);
            conn.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    private static void requireCovered(Connection conn, Scope scope) throws SQLException {
        try (PreparedStatement ps = ReconcileStatements.uncovered(scope).prepare(conn); ResultSet rs = ps.executeQuery()) {
            rs.next();
            String gaps = rs.getString(1);
            if (!"{}".equals(gaps)) {
                throw new NotCoveredException("no succeeded batch run covers " + gaps.replace("\"", "")
                        + " of [" + scope.from() + ", " + scope.to() + "): run `backfill range` (or `backfill nightly`)"
                        + " for it first, then reconcile");
            }
        }
    }

    private Comparison compare(Connection conn, Scope scope, long runId) throws SQLException {
        GroupTotals range = GroupTotals.EMPTY;
        List<Comparison.WindowTotal> windows = new ArrayList<>();
        List<Comparison.CampaignDayTotal> campaignDays = new ArrayList<>();
        try (PreparedStatement ps = ReconcileStatements.compare(scope, runId, settings.tolerances(), settings.zone())
                .prepare(conn); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                GroupTotals totals = new GroupTotals(new KeyCounts(rs.getLong("compared"), rs.getLong("matched"),
                        rs.getLong("mismatched"), rs.getLong("missing_in_stream"), rs.getLong("missing_in_batch"),
                        rs.getLong("beyond_tolerance")), MetricColumns.read(rs, "stream_"), MetricColumns.read(rs, "batch_"));
                switch (rs.getInt("g")) {
                    case 0 -> range = totals;
                    case 1 -> windows.add(new Comparison.WindowTotal(Timestamps.read(rs, "window_start"),
                            Timestamps.read(rs, "window_end"), totals));
                    default -> campaignDays.add(new Comparison.CampaignDayTotal(rs.getString("campaign_id"),
                            rs.getObject("day", java.time.LocalDate.class), totals));
                }
            }
        }
        windows.sort(Comparator.comparingLong(Comparison.WindowTotal::windowStartMillis));
        campaignDays.sort(Comparator.comparing(Comparison.CampaignDayTotal::day)
                .thenComparing(Comparison.CampaignDayTotal::campaignId));
        return new Comparison(range, windows, campaignDays);
    }

    private static long correct(Connection conn, Scope scope, long runId, Map<CorrectionLogTable.Reason, Long> logged)
            throws SQLException {
        long finalized = 0;
        try (PreparedStatement ps = ReconcileStatements.correct(scope, runId).prepare(conn); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                if ("finalized".equals(rs.getString("what"))) {
                    finalized = rs.getLong("n");
                } else {
                    logged.put(CorrectionLogTable.Reason.of(rs.getString("reason")), rs.getLong("n"));
                }
            }
        }
        return finalized;
    }

    /**
     * What the serving view shows for the scope now. Within this transaction every key of the scope has just
     * been finalized to its batch value, so anything else means the view and the corrections disagree: the run
     * fails rather than tell finance numbers it cannot vouch for.
     */
    private static WindowMetrics verifyServed(Connection conn, Scope scope, GroupTotals range) throws SQLException {
        try (PreparedStatement ps = ReconcileStatements.served(scope).prepare(conn); ResultSet rs = ps.executeQuery()) {
            rs.next();
            WindowMetrics served = MetricColumns.read(rs);
            long notFinal = rs.getLong("not_final");
            if (notFinal != 0 || !served.equals(range.batch())) {
                throw new IllegalStateException("after corrections window_metrics serves " + served + " with " + notFinal
                        + " keys not final, but the batch totals are " + range.batch());
            }
            return served;
        }
    }

    /** One advisory lock per schema: reconciliations of different schemas (environments, tests) never wait for each other. */
    private static long lockKey(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT hashtextextended('recount.reconcile.' || current_schema(), 0)")) {
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
                    throw new IllegalStateException("another reconciliation of this schema is still running after "
                            + LOCK_TIMEOUT.toMinutes() + " minutes; try again later", e);
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
