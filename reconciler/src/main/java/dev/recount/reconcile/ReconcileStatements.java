package dev.recount.reconcile;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.Tolerance;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.WindowCorrectionsTable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The reconciler's set-based SQL for one metric set, generated from its dimensions and measures and naming its
 * objects ({@link SetTables}); a run is a handful of statements per set, whatever the number of keys.
 * {@link #windowSurvey}, {@link #batchDays} and {@link #finalFingerprints} read each side of the scope aggregated per
 * window or per day of the first dimension (key counts, fingerprints, the batch's sums; no join); the windows whose
 * fingerprints are not the ones the last applied run recorded go through {@link #reconcile} (the key-by-key join:
 * diffs, corrections, log; a first run joins on a second connection instead, {@link #differingKeys}, and finishes
 * with {@link #reconcileFromDiffsIntoNewPartition}), the others keep their state and have their diffs copied
 * ({@link #copyDiffs}); {@link #diffCounts} counts the run's diffs per group, {@link #finalRows} and
 * {@link #streamKeysNotFinalized} check what the reconciled windows serve afterwards and give what the run left in
 * the set's {@code window_corrections}.
 *
 * <p>Every name in the text is a strict identifier (core's {@code Identifiers}) or one of recount's own; every value
 * is bound ({@link Sql}).
 */
final class ReconcileStatements {
    /** How a key of the scope compared ({@code j.st}); NULL: a finalized key neither side has any more. */
    static final int MATCH = 0, MISMATCH = 1, MISSING_IN_STREAM = 2, MISSING_IN_BATCH = 3;

    /** {@code what} of the count rows {@link #reconcile} returns. */
    static final String FINALIZED = "finalized", LOGGED = "logged";

    /** The sides {@link #windowSurvey} reads. */
    static final String STREAM = "stream", BATCH = "batch";

    /**
     * Which row hash {@link #fingerprint} uses, recorded with every window ({@code reconciled_windows
     * .fingerprint_version}, V16): 1 was {@code hash_record_extended} of the row, 2 is {@link #rowHash}. A window
     * recorded with another version counts as changed (it is reconciled key by key once and recorded again).
     */
    static final int FINGERPRINT_VERSION = 2;

    /**
     * The prefix of the summed measures' columns in what the survey statements return ({@code sum_<measure>}): a
     * measure may be called anything, {@code keys} included, and must not meet the statements' own columns.
     */
    static final String SUM = "sum_";

    /** The first dimension's value of a per-day group ({@link #batchDays}, {@link #diffCounts}). */
    static final String GROUP = "group_value";

    /** The day bucket of a per-day group ({@code width_bucket} of {@link ScopeDays}). */
    static final String DAY = "day_bucket";

    /** The seed of {@link #rowHash} for a finalized row: a removed (hidden) row hashes unlike any batch row. */
    private static final String FINAL_SEED = "removed::int";

    private final MetricSet set;
    private final SetTables tables;
    private final SetColumns columns;
    private final List<Measure> measures;
    private final List<String> dimensions;
    /** "window_start, campaign_id, channel_id": a row's key. */
    private final String key;

    private final ReconciliationDiffsTable diffs;
    private final WindowCorrectionsTable corrections;
    private final CorrectionLogTable log;

    /**
     * The finalized side's columns of {@code a} or {@code j} for a scope that has no finalized key: NULL values, not
     * finalized, to be written.
     */
    private final String nothingFinalized;

    ReconcileStatements(SetTables tables) {
        this.tables = tables;
        this.set = tables.set();
        this.columns = new SetColumns(tables);
        this.measures = set.measures();
        this.dimensions = set.dimensionNames();
        this.key = columns.keyList();
        this.diffs = new ReconciliationDiffsTable(tables);
        this.corrections = new WindowCorrectionsTable(tables);
        this.log = new CorrectionLogTable(tables);
        this.nothingFinalized = eachMeasure(m -> "NULL::" + m.sqlType() + " AS final_" + m.name())
                + ", NULL::boolean AS was_removed, false AS finalized, true AS needs_write";
    }

    MetricSet set() {
        return set;
    }

    SetTables tables() {
        return tables;
    }

    ReconciliationDiffsTable diffsTable() {
        return diffs;
    }

    /** The set's first dimension: the per-day groups of the report (the default set: a campaign per day). */
    String firstDimension() {
        return dimensions.get(0);
    }

    /**
     * The parts of {@code [from, to)} that no succeeded batch run of this set covered, one row per gap as epoch
     * milliseconds. A batch run covers the sets it names in {@code metric_sets} (V26; NULL: the default set only).
     * `affected` runs are left out: their recorded range spans windows they did not necessarily recompute.
     */
    Sql uncovered(Scope scope) {
        // Printed as ISO instants, the way users type them.
        return new Sql()
                .add("SELECT (extract(epoch FROM lower(gap)) * 1000)::bigint, (extract(epoch FROM upper(gap))"
                        + " * 1000)::bigint FROM unnest(tstzmultirange(tstzrange(")
                .timestamp(scope.fromMillis())
                .add(", ")
                .timestamp(scope.toMillis())
                .add(")) - coalesce((SELECT range_agg(tstzrange(range_from, range_to)) FROM "
                        + BatchRunsTable.TABLE + " WHERE status = 'succeeded' AND mode <> 'affected'"
                        + " AND range_from IS NOT NULL AND range_to IS NOT NULL AND ")
                .text(set.name())
                .add(" = ANY (coalesce(metric_sets, ARRAY['" + MetricSet.DEFAULT + "']::text[])) AND range_from < ")
                .timestamp(scope.toMillis())
                .add(" AND range_to > ")
                .timestamp(scope.fromMillis())
                .add("), '{}'::tstzmultirange)) AS gap ORDER BY 1");
    }

    /**
     * The key-by-key part of a run, in one statement, over the windows that changed (all of them on a first run).
     * It reads the scope's stream, batch and finalized rows once, as one three-way FULL JOIN by key kept in memory
     * ({@code j}), and from it:
     * <ul>
     *   <li>inserts a diffs row for each key stream and batch do not agree on;</li>
     *   <li>with {@code apply}: makes the batch value final for every key of the scope — a plain insert for keys
     *       never finalized (the first run of a day inserts every key; no conflict handling needed, runs are
     *       serialized), an upsert for the few finalized to something else, nothing for the rest — and appends a
     *       correction log entry for each served value that changes;</li>
     *   <li>without {@code apply} (a dry run): only counts what it would write;</li>
     *   <li>returns the counts of what it wrote or would write: {@code what} = {@value #FINALIZED} with the keys
     *       inserted or changed, or {@value #LOGGED} with the entries per {@code reason}.</li>
     * </ul>
     * The value a key served before is its finalized value if it has one (NULL if that hid it), else the
     * stream's (NULL if the stream never had it); after is the batch value (NULL: the batch has no such key, so it
     * is hidden).
     */
    Sql reconcile(Scope scope, long runId, boolean apply) {
        return reconcile(scope, runId, apply, null, false);
    }

    /**
     * As {@link #reconcile(Scope, long, boolean)}, applying, with the keys inserted into {@code newPartition}
     * ({@link NewPartition}: no index, covering the scope) instead of the set's {@code window_corrections}. No key of
     * the scope is finalized then: the join leaves the finalized side out and keeps only the keys stream and batch
     * disagree on; the table holds every batch row as it is already ({@link NewPartition#create}), so only the keys
     * only the stream has are inserted, in no order (the table's indexes are built after the load). Its
     * {@value #FINALIZED} count is only those keys (inserted as removed): the caller adds the scope's batch rows as
     * the survey counted them in the run's snapshot, and the check afterwards compares every window's finalized key
     * count with the batch's. The statement needs nothing from the survey, so it can run while the survey is read.
     */
    Sql reconcileIntoNewPartition(Scope scope, long runId, NewPartition newPartition) {
        return reconcile(scope, runId, true, newPartition, false);
    }

    /**
     * The run's diffs of a scope that has no finalized key (the diffs table's insert columns, in that order), as a
     * query that writes nothing: the stream and batch rows joined, the keys they disagree on. The join is most of a
     * first run's statement; as a read-only query it can run on a second connection in the run's snapshot while the
     * run's own connection fills and indexes the {@link NewPartition}, and the run then loads the rows ({@code COPY})
     * and goes on with {@link #reconcileFromDiffsIntoNewPartition}.
     */
    Sql differingKeys(Scope scope, long runId) {
        Sql sql = sides(scope);
        sql.add(" ");
        diffRows(sql, runId);
        sql.add(" FROM (");
        joinWithoutFinalized(sql);
        return sql.add(") a WHERE st <> " + MATCH);
    }

    /**
     * As {@link #reconcileIntoNewPartition}, with the run's diffs of the scope already in the diffs table ({@link
     * #differingKeys}): the keys stream and batch disagree on are read from there, not joined again. Logs the served
     * values that change and hides the keys only the stream has; returns the same counts.
     */
    Sql reconcileFromDiffsIntoNewPartition(Scope scope, long runId, NewPartition newPartition) {
        return reconcile(scope, runId, true, newPartition, true);
    }

    /** {@code WITH s, b}: the scope's stream and batch rows (not materialized: each is read once). */
    private Sql sides(Scope scope) {
        Sql sql = new Sql()
                .add("WITH s AS NOT MATERIALIZED (SELECT " + key + ", window_end, revision, " + each(m -> m) + " FROM "
                        + tables.streamWindowMetrics() + " s WHERE ")
                .inScope("s.window_start", scope)
                .add(")");
        return sql.add(", b AS NOT MATERIALIZED (SELECT " + key + ", window_end, run_id, " + each(m -> m) + " FROM "
                        + tables.batchWindowMetrics() + " b WHERE ")
                .inScope("b.window_start", scope)
                .add(")");
    }

    /** The columns of a diffs row of run {@code runId} from a row of {@code a} or {@code j}. */
    private void diffRows(Sql sql, long runId) {
        sql.add("SELECT ")
                .bigint(runId)
                .add(", window_start, window_end, " + columns.dimensionList() + ", CASE st WHEN " + MISMATCH
                        + " THEN 'mismatch' WHEN " + MISSING_IN_STREAM + " THEN 'missing_in_stream' ELSE"
                        + " 'missing_in_batch' END, ");
        withinTolerance(sql);
        sql.add(", stream_revision, " + each(m -> "stream_" + m) + ", " + each(m -> "batch_" + m));
    }

    private Sql reconcile(Scope scope, long runId, boolean apply, NewPartition newPartition, boolean fromDiffs) {
        boolean fresh = newPartition != null;
        Sql sql;
        if (fromDiffs) {
            // The keys stream and batch disagree on, as this run recorded them; nothing is finalized in the scope.
            sql = new Sql()
                    .add("WITH a AS MATERIALIZED (SELECT " + key + ", window_end AS target_window_end,"
                            + " status <> 'missing_in_stream' AS in_stream, status <> 'missing_in_batch' AS in_batch, "
                            + each(m -> "stream_" + m) + ", " + each(m -> "batch_" + m) + ", " + nothingFinalized
                            + " FROM " + diffs.table() + " WHERE run_id = ")
                    .bigint(runId)
                    .add(" AND ")
                    .inScope("window_start", scope)
                    .add(")");
        } else if (fresh) {
            sql = sides(scope);
            // Nothing finalized: the keys that need more than inserting are those stream and batch disagree on,
            // straight from the join; the insert reads the batch's rows itself (no million-row j to keep).
            sql.add(", a AS MATERIALIZED (SELECT * FROM (");
            joinWithoutFinalized(sql);
            sql.add(") j WHERE st <> " + MATCH + ")");
        } else {
            sql = sides(scope);
            sql.add(", c AS (SELECT " + key + ", window_end, removed, " + each(m -> m) + " FROM " + corrections.table()
                            + " c WHERE ")
                    .inScope("c.window_start", scope)
                    .add(")");
            joined(sql);
            // The keys that need more than counting, read from j once: those stream and batch disagree on, and those
            // whose served value changes or that were finalized to something else. Few, on every run (a first run
            // finalizes every key, but only inserts most of them: that insert reads j itself).
            sql.add(", a AS MATERIALIZED (SELECT * FROM j WHERE st <> " + MATCH + " OR needs_write AND (finalized OR ("
                    + each(m -> "stream_" + m) + ") IS DISTINCT FROM (" + each(m -> "batch_" + m) + ")))");
        }
        if (!fromDiffs) {
            sql.add(", diffs AS (INSERT INTO " + diffs.table() + " (" + diffs.insertColumns() + ") ");
            diffRows(sql, runId);
            sql.add(" FROM a WHERE st <> " + MATCH + ")");
        }
        logEntries(sql);
        if (apply) {
            if (fresh) {
                // The table holds every batch row already, final as it is (V20); every key only the stream has is
                // hidden (removed, as zeros). In no particular order: the table's indexes are built after the load.
                sql.add(", inserted AS (INSERT INTO " + newPartition.name() + " (" + corrections.insertColumns()
                                + ") SELECT window_start, target_window_end, " + columns.dimensionList() + ", "
                                + each(m -> "0") + ", true, ")
                        .bigint(runId)
                        .add(", NULL FROM a WHERE NOT in_batch)");
            } else {
                String values = "SELECT window_start, target_window_end, " + columns.dimensionList() + ", "
                        + each(m -> "coalesce(batch_" + m + ", 0)") + ", NOT in_batch, ";
                sql.add(", inserted AS (INSERT INTO " + corrections.table() + " (" + corrections.insertColumns() + ") "
                                + values)
                        .bigint(runId)
                        .add(", batch_run_id FROM j WHERE NOT finalized"
                                // In key order, so each row lands on the primary key's rightmost page (a new day is
                                // the newest key range) instead of a random one. The join yields batch rows in their
                                // physical order, which is random when a backfill wrote them so: inserting 1M rows in
                                // random order into the primary key alone measured 6.5 s against 3.0 s sorted (sort
                                // included).
                                + " ORDER BY " + key + " RETURNING 1)");
                sql.add(", changed AS (INSERT INTO " + corrections.table() + " (" + corrections.insertColumns() + ") "
                                + values)
                        .bigint(runId)
                        .add(", batch_run_id FROM a WHERE finalized AND needs_write"
                                + corrections.onConflictUpdateIfChanged() + " RETURNING 1)");
            }
            sql.add(", logged AS (INSERT INTO " + log.table() + " (" + log.insertColumns() + ") SELECT ")
                    .bigint(runId)
                    // In key order, each key's measures in the set's order: a run's entries read the same whichever
                    // way its rows were joined.
                    .add(", " + key + ", metric, before_value, after_value, reason FROM entries ORDER BY " + key
                            + ", metric_order RETURNING reason)");
        }
        // Only the counts of what it wrote: the totals come from ScopeSurvey and this run's diffs (DiffCounts).
        if (fresh) {
            sql.add(" SELECT '" + FINALIZED + "' AS what, NULL::text AS reason, (SELECT count(*) FROM a WHERE NOT"
                    + " in_batch) AS n UNION ALL SELECT '" + LOGGED
                    + "', reason, count(*) FROM logged GROUP BY reason");
        } else if (apply) {
            sql.add(" SELECT '" + FINALIZED + "' AS what, NULL::text AS reason, (SELECT count(*) FROM inserted)"
                    + " + (SELECT count(*) FROM changed) AS n"
                    + " UNION ALL SELECT '" + LOGGED + "', reason, count(*) FROM logged GROUP BY reason");
        } else {
            sql.add(" SELECT '" + FINALIZED + "' AS what, NULL::text AS reason, count(*) AS n FROM j WHERE needs_write"
                    + " UNION ALL SELECT '" + LOGGED + "', reason, count(*) FROM entries GROUP BY reason");
        }
        return sql;
    }

    /**
     * {@code j}: every key of the scope that the stream, the batch or an earlier finalization has, once, with all
     * three sides' columns and what this run needs to know about it, computed once: {@code st} (how stream and
     * batch compare), {@code finalized}, and {@code needs_write} (never finalized, or finalized to anything else
     * than the batch value now). Materialized: every later part of the statement reads it instead of the tables.
     */
    private void joined(Sql sql) {
        String sIn = "s.window_start IS NOT NULL", bIn = "b.window_start IS NOT NULL";
        sql.add(", j AS MATERIALIZED (SELECT coalesce(b.window_start, s.window_start, c.window_start) AS window_start, "
                + eachDimension(d -> "coalesce(b." + d + ", s." + d + ", c." + d + ") AS " + d) + ","
                + " coalesce(b.window_end, s.window_end) AS window_end,"
                + " coalesce(b.window_end, s.window_end, c.window_end) AS target_window_end,"
                + " s.revision AS stream_revision, b.run_id AS batch_run_id, " + sIn + " AS in_stream, " + bIn
                + " AS in_batch,"
                + " " + status(sIn, bIn) + " AS st, "
                + each(m -> "s." + m + " AS stream_" + m) + ", " + each(m -> "b." + m + " AS batch_" + m) + ", "
                + each(m -> "c." + m + " AS final_" + m) + ", c.removed AS was_removed,"
                + " c.window_start IS NOT NULL AS finalized,"
                + " c.window_start IS NULL OR (c.window_end, " + each(m -> "c." + m) + ", c.removed) IS DISTINCT FROM"
                + " (coalesce(b.window_end, s.window_end, c.window_end), " + each(m -> "coalesce(b." + m + ", 0)")
                + ", NOT " + bIn + ") AS needs_write"
                + " FROM s FULL JOIN b ON " + columns.sameKey("s", "b")
                + " FULL JOIN c ON c.window_start = coalesce(b.window_start, s.window_start)"
                + eachDimension(d -> " AND c." + d + " = coalesce(b." + d + ", s." + d + ")", "") + ")");
    }

    /**
     * The rows of {@code j} for a scope that has no finalized key (a new partition's), as a subquery: the stream and
     * batch rows joined, the finalized side's columns NULL ({@code finalized} false, {@code needs_write} true).
     */
    private void joinWithoutFinalized(Sql sql) {
        String sIn = "s.window_start IS NOT NULL", bIn = "b.window_start IS NOT NULL";
        sql.add("SELECT coalesce(b.window_start, s.window_start) AS window_start, "
                + eachDimension(d -> "coalesce(b." + d + ", s." + d + ") AS " + d) + ","
                + " coalesce(b.window_end, s.window_end) AS window_end,"
                + " coalesce(b.window_end, s.window_end) AS target_window_end,"
                + " s.revision AS stream_revision, b.run_id AS batch_run_id, " + sIn + " AS in_stream, " + bIn
                + " AS in_batch, " + status(sIn, bIn) + " AS st, "
                + each(m -> "s." + m + " AS stream_" + m) + ", " + each(m -> "b." + m + " AS batch_" + m) + ", "
                + nothingFinalized
                + " FROM s FULL JOIN b ON " + columns.sameKey("s", "b"));
    }

    /** {@code st} of {@code j}: how stream and batch compare ({@link #MATCH} ...). */
    private String status(String sIn, String bIn) {
        return "CASE WHEN " + bIn + " THEN CASE WHEN " + sIn + " THEN CASE WHEN (" + each(m -> "s." + m) + ") = ("
                + each(m -> "b." + m) + ") THEN " + MATCH + " ELSE " + MISMATCH + " END ELSE " + MISSING_IN_STREAM
                + " END WHEN " + sIn + " THEN " + MISSING_IN_BATCH + " END";
    }

    /**
     * {@code entries}: one row per served value a finalization changes (what the correction log records), from
     * {@code a}, which already left out the keys never finalized whose stream values equal the batch's: most keys
     * of a first run, which only become final. Values as {@link Measure#SUM_SQL_TYPE}, the log's column type, whatever
     * the measure.
     */
    private void logEntries(Sql sql) {
        List<String> rows = new ArrayList<>();
        for (int i = 0; i < measures.size(); i++) {
            String m = measures.get(i).name();
            rows.add("('" + m + "', " + i + ", CASE WHEN finalized THEN CASE WHEN was_removed THEN NULL ELSE final_" + m
                    + " END ELSE stream_" + m + " END::" + Measure.SUM_SQL_TYPE + ", batch_" + m + "::"
                    + Measure.SUM_SQL_TYPE + ")");
        }
        sql.add(", entries AS (SELECT " + key + ", m.metric, m.metric_order, m.before_value, m.after_value,"
                + " CASE WHEN finalized THEN '" + Reason.BATCH_CHANGED.wireName() + "'"
                + " WHEN NOT in_batch THEN '" + Reason.MISSING_IN_BATCH.wireName() + "'"
                + " WHEN NOT in_stream THEN '" + Reason.MISSING_IN_STREAM.wireName() + "'"
                + " ELSE '" + Reason.STREAM_MISMATCH.wireName() + "' END AS reason"
                + " FROM a CROSS JOIN LATERAL (VALUES " + String.join(", ", rows)
                + ") AS m(metric, metric_order, before_value, after_value)"
                + " WHERE needs_write AND m.before_value IS DISTINCT FROM m.after_value)");
    }

    /**
     * Whether a key is within tolerance on every measure, each with the set's own tolerance: {@code |stream - batch|
     * <= absolute OR |stream - batch| <= relative * |batch|}, a missing side counting as 0 (so a missing key is within
     * only if its values are that small). Relative tolerances compare as exact numerics.
     */
    private void withinTolerance(Sql sql) {
        sql.add("(");
        for (int i = 0; i < measures.size(); i++) {
            String m = measures.get(i).name();
            String d = "abs(coalesce(stream_" + m + ", 0) - coalesce(batch_" + m + ", 0))";
            Tolerance t = set.tolerance(m);
            sql.add(i == 0 ? "(" : " AND (")
                    .add(d + " <= ")
                    .bigint(t.absolute())
                    .add(" OR " + d + "::numeric <= ")
                    .numeric(t.relative())
                    .add(" * abs(coalesce(batch_" + m + ", 0)))");
        }
        sql.add(")");
    }

    /**
     * The 64-bit hash of one row: a chain of per-column hashes, each column hashed by its type's own extended hash
     * function seeded with the hash of the columns before it, starting from {@code seed} (an expression: the stream's
     * revision, 0 for the batch, the correction's removed flag), the measures in the set's order, then the dimensions
     * from the last to the first. About 30 % cheaper per row than {@code hash_record_extended} of the same columns (no
     * record to build and take apart), and every row of every side is hashed by every run. A finalized row that is
     * not removed hashes (seed 0) exactly as the batch row it was finalized from: the served rows of a window can be
     * compared with the batch's by fingerprint. For the default set this is the hash V16 recorded windows with.
     */
    String rowHash(String seed) {
        String h = "timestamptz_hash_extended(window_end, " + seed + ")";
        for (Measure m : measures) {
            h = (m.isCount() ? "hashint8extended(" : "hash_numeric_extended(") + m.name() + ", " + h + ")";
        }
        for (int d = dimensions.size() - 1; d >= 0; d--) h = "hashtextextended(" + dimensions.get(d) + ", " + h + ")";
        return h;
    }

    /**
     * The fingerprint of a group of rows: the XOR of {@link #rowHash} of each. Keys are unique per table, so no two
     * rows cancel out; any changed, added or removed row changes it (but for a 2^-64 chance), and the key count
     * beside it is a second check.
     */
    private String fingerprint(String seed) {
        return "coalesce(bit_xor(" + rowHash(seed) + "), 0)";
    }

    /**
     * One side of the scope ({@link #STREAM} or {@link #BATCH}) per window, without joining keys: key count, first
     * and last window end, fingerprint, and for the batch the summed measures ({@value #SUM}{@code <measure>}; the
     * stream's sums are the batch's plus the differences of the run's diffs: {@link #diffCounts}). PostgreSQL
     * aggregates ~1,440 groups a day in parallel. One statement per side: under a UNION ALL the planner runs each side
     * in one process instead.
     */
    Sql windowSurvey(Scope scope, String side) {
        boolean stream = side.equals(STREAM);
        if (!stream && !side.equals(BATCH))
            throw new IllegalArgumentException("side must be stream or batch, got " + side);
        return new Sql()
                .add("SELECT window_start, count(*) AS keys, min(window_end) AS min_window_end,"
                        + " max(window_end) AS max_window_end, " + fingerprint(stream ? "revision" : "0")
                        + " AS fingerprint" + (stream ? "" : ", " + sums(m -> m)) + " FROM "
                        + (stream ? tables.streamWindowMetrics() : tables.batchWindowMetrics()) + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY window_start");
    }

    /**
     * The batch's key count and summed measures per value of the first dimension per day of the scope
     * ({@value #DAY}: a bucket of {@code days}; for the default set, per campaign-day). A scope within one day (a
     * nightly run) groups by the dimension alone: the planner then knows there are few groups and aggregates in
     * parallel, where it takes {@code width_bucket} for a near-unique key.
     */
    Sql batchDays(Scope scope, ScopeDays days) {
        Sql sql = new Sql().add("SELECT " + firstDimension() + " AS " + GROUP + ", ");
        if (days.startsMillis().size() == 1) sql.add("1");
        else
            sql.add("width_bucket(window_start, ")
                    .timestamps(days.startsMillis())
                    .add(")");
        return sql.add(" AS " + DAY + ", count(*) AS keys, " + sums(m -> m) + " FROM " + tables.batchWindowMetrics()
                        + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY 1, 2");
    }

    /**
     * Whether the set's {@code window_writes} names a window of the scope: something wrote it in the stream's or the
     * batch's table since the run that last recorded it (or nothing recorded it yet). One index lookup.
     */
    Sql windowsWritten(Scope scope) {
        return new Sql()
                .add("SELECT EXISTS (SELECT 1 FROM " + tables.windowWrites() + " WHERE ")
                .inScope("window_start", scope)
                .add(")");
    }

    /**
     * Deletes the rows of the set's {@code window_writes} this transaction sees for the windows of the scope: the run
     * records those windows as it read them in the same snapshot. Rows committed after the snapshot are not seen, and
     * stay.
     */
    Sql forgetWindowWrites(Scope scope) {
        return new Sql().add("DELETE FROM " + tables.windowWrites() + " WHERE ").inScope("window_start", scope);
    }

    /** Per window of the scope, how many rows the set's {@code window_corrections} holds and their fingerprint. */
    Sql finalFingerprints(Scope scope) {
        return new Sql()
                .add("SELECT window_start, count(*) AS keys, " + fingerprint(FINAL_SEED) + " AS fingerprint FROM "
                        + corrections.table() + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY window_start");
    }

    /**
     * Per window of the scope, what the set's {@code window_corrections} now holds, read once after the run
     * finalized it: the rows served as final ({@code kept_*}: not removed) — key count, fingerprint and summed
     * measures, to be compared with the batch's — and the removed rows' key count and fingerprint. The two
     * fingerprints XORed are the window's {@link #finalFingerprints} (a kept row's seed is 0, a removed row's 1),
     * which the run records.
     */
    Sql finalRows(Scope scope) {
        return finalRowsOf(corrections.table())
                .add(" WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY window_start");
    }

    /**
     * As {@link #finalRows}, of every row of the run's {@link NewPartition}, not attached yet, which holds the scope's
     * rows and nothing else (the caller checks that every window it returns is in the scope). Without a range to
     * select, the planner reads the table with parallel workers: it has no statistics yet, and took the range, which
     * is all of the table, for a few thousand rows, read in one process through the primary key (≈ 1 s of a first run).
     */
    Sql finalRowsOfNewPartition(NewPartition newPartition) {
        return finalRowsOf(newPartition.name()).add(" GROUP BY window_start");
    }

    private Sql finalRowsOf(String table) {
        return new Sql()
                .add("SELECT window_start, count(*) FILTER (WHERE NOT removed) AS kept_keys, coalesce(bit_xor("
                        + rowHash("0") + ") FILTER (WHERE NOT removed), 0) AS kept_fingerprint, "
                        + eachMeasure(m -> "coalesce(sum(" + m.name() + ") FILTER (WHERE NOT removed), 0)::"
                                + m.sqlType() + " AS " + SUM + m.name())
                        + ", count(*) FILTER (WHERE removed) AS removed_keys, coalesce(bit_xor(" + rowHash("1")
                        + ") FILTER (WHERE removed), 0) AS removed_fingerprint FROM " + table);
    }

    /**
     * How many keys of the scope run {@code runId} found only in the stream (its diffs) have no row in {@code table}
     * (the set's {@code window_corrections}, or the run's new partition): the serving view would still serve them
     * from the stream, not final. With the batch's keys all finalized (their fingerprint) and the stream's key count
     * checked against the diffs, 0 means the view serves no key of the scope as not final. Index lookups, one per
     * such key.
     */
    Sql streamKeysNotFinalized(Scope scope, long runId, String table) {
        return new Sql()
                .add("SELECT count(*) AS n FROM " + diffs.table() + " d WHERE d.run_id = ")
                .bigint(runId)
                .add(" AND d.status = 'missing_in_batch' AND ")
                .inScope("d.window_start", scope)
                .add(" AND NOT EXISTS (SELECT 1 FROM " + table + " c WHERE " + columns.sameKey("c", "d") + ")");
    }

    /**
     * Copies into run {@code runId} the diffs of windows that did not change since an earlier run: window
     * {@code windows[i]} from run {@code fromRuns[i]}. Within tolerance is recomputed with this run's tolerances
     * (the values are the same, the settings may not be).
     */
    Sql copyDiffs(long runId, List<Long> windows, List<Long> fromRuns) {
        Sql sql = new Sql()
                .add("INSERT INTO " + diffs.table() + " (" + diffs.insertColumns() + ") SELECT ")
                .bigint(runId)
                .add(", d.window_start, d.window_end, " + columns.dimensionList("d.") + ", d.status, ");
        withinTolerance(sql);
        return sql.add(", d.stream_revision, " + columns.measureList("d.stream_") + ", "
                        + columns.measureList("d.batch_") + " FROM unnest(")
                .timestamps(windows)
                .add(", ")
                .bigints(fromRuns)
                .add(") AS u(window_start, run_id) JOIN " + diffs.table()
                        + " d ON d.run_id = u.run_id AND d.window_start = u.window_start");
    }

    /**
     * Run {@code runId}'s diffs per window ({@code g = 1}) and per value of the first dimension per day ({@code g =
     * 2}, {@value #GROUP} and {@value #DAY}: a bucket of {@code days}): how many of each status, how many beyond
     * tolerance, and the summed stream − batch difference of each measure ({@code delta_<measure>}, a missing side as
     * 0). With the survey's batch rows that is every group's classification and stream totals: keys that match add
     * the same to both sides.
     */
    Sql diffCounts(long runId, ScopeDays days) {
        return new Sql()
                .add("SELECT CASE WHEN GROUPING(window_start) = 0 THEN 1 ELSE 2 END AS g, window_start, " + GROUP + ", "
                        + DAY + ","
                        + " count(*) FILTER (WHERE status = 'mismatch') AS mismatched,"
                        + " count(*) FILTER (WHERE status = 'missing_in_stream') AS missing_in_stream,"
                        + " count(*) FILTER (WHERE status = 'missing_in_batch') AS missing_in_batch,"
                        + " count(*) FILTER (WHERE NOT within_tolerance) AS beyond_tolerance, "
                        + eachMeasure(m -> "sum(coalesce(stream_" + m.name() + ", 0) - coalesce(batch_" + m.name()
                                + ", 0))::" + m.sqlType() + " AS delta_" + m.name())
                        + " FROM (SELECT d.window_start, d." + firstDimension() + " AS " + GROUP
                        + ", d.status, d.within_tolerance, " + columns.measureList("d.stream_") + ", "
                        + columns.measureList("d.batch_") + ", width_bucket(d.window_start, ")
                .timestamps(days.startsMillis())
                .add(") AS " + DAY + " FROM " + diffs.table() + " d WHERE d.run_id = ")
                .bigint(runId)
                .add(") x GROUP BY GROUPING SETS ((window_start), (" + GROUP + ", " + DAY + "))");
    }

    /** "sum(m)::type AS sum_m, ..." over every measure of the set, of {@code column(m)}. */
    private String sums(Function<String, String> column) {
        return eachMeasure(m -> "sum(" + column.apply(m.name()) + ")::" + m.sqlType() + " AS " + SUM + m.name());
    }

    private String each(Function<String, String> perColumn) {
        return eachMeasure(m -> perColumn.apply(m.name()));
    }

    private String eachMeasure(Function<Measure, String> perMeasure) {
        return measures.stream().map(perMeasure).collect(Collectors.joining(", "));
    }

    private String eachDimension(Function<String, String> perDimension) {
        return eachDimension(perDimension, ", ");
    }

    private String eachDimension(Function<String, String> perDimension, String separator) {
        return dimensions.stream().map(perDimension).collect(Collectors.joining(separator));
    }
}
