package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.config.ConfigException;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.sets.MetricSetRegistry;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable.ReplaceResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run's row in {@code batch_runs} from start to finish: recorded at once (so even a run that dies is visible), its
 * results and its success committed in ONE transaction — every set's replace, its attribution, the run's own step —
 * or, on any failure, rolled back, its staged rows dropped and the error recorded; the previous results stay.
 */
final class RunLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(RunLifecycle.class);

    private RunLifecycle() {}

    /**
     * Records the run (holding its liveness lock until {@link RunLocks#close}) with the sets it computes, and fails
     * the runs whose process died without finishing: without that they would stay "running" forever, with their
     * staged rows.
     */
    static long start(RunContext run, Connection conn, Mode mode, Long fromMillis, Long toMillis, boolean force)
            throws SQLException {
        requireMigrated(run, conn);
        long runId = BatchRunsTable.start(conn, mode, fromMillis, toMillis, force, run.names());
        List<Long> abandoned = BatchRunsTable.failAbandoned(conn, runId, run.declaredTables());
        if (!abandoned.isEmpty()) {
            LOG.warn(
                    "run {}: marked runs {} failed: their process ended without finishing (killed?); their staged"
                            + " rows are dropped, their previous results were never touched",
                    runId,
                    abandoned);
        }
        return runId;
    }

    /**
     * Refuses (exit 2, nothing recorded) sets whose tables are not made for their definitions: not migrated yet, or
     * migrated with other dimensions or measures, or removed ({@link MetricSetRegistry#check}).
     */
    private static void requireMigrated(RunContext run, Connection conn) throws SQLException {
        try {
            MetricSetRegistry.check(conn, run.sets());
        } catch (ConfigException e) {
            throw BackfillException.badArguments(e.getMessage());
        }
    }

    /**
     * Rolls back, drops the run's staging rows and records the error; never hides the original failure. Each step is
     * tried whatever the one before did: a set's staging that cannot be cleared must not leave the run "running".
     */
    static void recordFailure(RunContext run, Connection conn, long runId, Throwable failure) {
        try {
            if (!conn.getAutoCommit()) {
                conn.rollback();
                conn.setAutoCommit(true);
            }
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
        for (MetricSet set : run.computed()) {
            try {
                SetTables tables = new SetTables(set);
                new BatchWindowMetricsTable(tables).clearStaging(conn, runId);
                // A set without attribution has no attribution tables (migrate makes them for those that have it).
                if (set.attribution()) new BatchAttributionMetricsTable(tables).clearStaging(conn, runId);
            } catch (SQLException | RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
        try {
            BatchRunsTable.fail(conn, runId, oneLine(failure));
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
        LOG.error("run {} failed: {}", runId, oneLine(failure));
    }

    /**
     * What a run replaces of one set: its windows in {@code scope} (null: nothing of this set), and, with {@code
     * attribution}, its attribution rows in the same range (a range run's scope).
     */
    record SetReplace(MetricSet set, BatchWindowMetricsTable.Scope scope, boolean attribution) {}

    /** A step of a run's own, in the transaction that commits its results; what it returns is handed back. */
    @FunctionalInterface
    interface InTransaction<T> {
        T run(Connection conn) throws SQLException;
    }

    /** What {@link #commit} committed: per set the replace, and what the run's own step returned (null without). */
    record Committed<T>(Map<String, ReplaceResult> perSet, T also) {
        ReplaceResult total() {
            ReplaceResult t = ReplaceResult.NOTHING;
            for (ReplaceResult r : perSet.values()) t = t.plus(r);
            return t;
        }
    }

    /**
     * The one transaction: every set's staged rows replace its scope, then {@code also}'s step, then the run is marked
     * succeeded with {@code details} (each set's counts added under {@code sets.<name>}), together.
     */
    static <T> Committed<T> commit(
            Connection conn,
            long runId,
            List<SetReplace> replaces,
            long events,
            Long rangeFrom,
            Long rangeTo,
            ObjectNode details,
            InTransaction<T> also)
            throws SQLException {
        long t0 = System.nanoTime();
        conn.setAutoCommit(false);
        try {
            // The staging table's statistics describe an earlier run's rows (often they say "no rows of this
            // run_id"), and a fresh result table may look tiny: PostgreSQL then plans the vanished-keys anti-join as
            // a nested loop over staging, quadratic in the row count (a full day, 720k keys: over ten minutes
            // instead of 15 s). A hash join is right at every size here. LOCAL: ends with this transaction.
            try (Statement s = conn.createStatement()) {
                s.execute("SET LOCAL enable_nestloop = off");
            }
            Map<String, ReplaceResult> perSet = new LinkedHashMap<>();
            for (SetReplace replace : replaces) {
                SetTables tables = new SetTables(replace.set());
                ReplaceResult r = replace.scope() == null
                        ? ReplaceResult.NOTHING
                        : new BatchWindowMetricsTable(tables).replaceFromStaging(conn, replace.scope(), runId);
                perSet.put(replace.set().name(), r);
                ObjectNode setDetails =
                        RunOutput.setDetails(details, replace.set().name());
                setDetails.put("window_rows_written", r.written());
                setDetails.put("window_rows_unchanged", r.unchanged());
                setDetails.put("window_rows_deleted", r.deleted());
                if (replace.attribution()) {
                    ReplaceResult a = new BatchAttributionMetricsTable(tables)
                            .replaceFromStaging(conn, (BatchWindowMetricsTable.Range) replace.scope(), runId);
                    setDetails.put("attribution_rows_written", a.written());
                    setDetails.put("attribution_rows_unchanged", a.unchanged());
                    setDetails.put("attribution_rows_deleted", a.deleted());
                }
            }
            T alsoReturned = also == null ? null : also.run(conn);
            Committed<T> committed = new Committed<>(perSet, alsoReturned);
            ReplaceResult total = committed.total();
            details.put("window_rows_unchanged", total.unchanged());
            details.put("replace_ms", (System.nanoTime() - t0) / 1_000_000);
            BatchRunsTable.succeed(
                    conn, runId, events, total.written(), total.deleted(), rangeFrom, rangeTo, details.toString());
            conn.commit();
            LOG.info(
                    "run {}: committed {} window rows written, {} unchanged, {} vanished keys deleted",
                    runId,
                    total.written(),
                    total.unchanged(),
                    total.deleted());
            return committed;
        } catch (SQLException | RuntimeException e) {
            conn.rollback();
            throw e;
        } finally {
            conn.setAutoCommit(true);
        }
    }

    static String oneLine(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) m = t.getClass().getSimpleName();
        int nl = m.indexOf('\n');
        return nl > 0 ? m.substring(0, nl) : m;
    }
}
