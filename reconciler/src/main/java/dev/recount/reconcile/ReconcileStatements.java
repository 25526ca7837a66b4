package dev.recount.reconcile;

import dev.recount.core.metrics.Metric;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowCorrectionsTable;
import dev.recount.db.tables.WindowWritesTable;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The reconciler's set-based SQL; a run is a handful of statements, whatever the number of keys. {@link #windowSurvey},
 * {@link #batchCampaignDays} and {@link #finalFingerprints} read each side of the scope aggregated per window or per
 * campaign-day (key counts, fingerprints, the batch's sums; no join); the windows whose fingerprints are not the ones the last applied run recorded go through
 * {@link #reconcile} (the key-by-key join: diffs, corrections, log; a first run joins on a second connection instead,
 * {@link #differingKeys}, and finishes with {@link #reconcileFromDiffsIntoNewPartition}), the others keep their state
 * and have their diffs copied ({@link #copyDiffs}); {@link #diffCounts} counts the run's diffs per group, {@link #finalRows} and
 * {@link #streamKeysNotFinalized} check what the reconciled windows serve afterwards and give what the run left in
 * {@code window_corrections}.
 */
final class ReconcileStatements {
    private static final Metric[] METRICS = Metric.values();
    private static final String KEY = "window_start, campaign_id, channel_id";

    /** How a key of the scope compared ({@code j.st}); NULL: a finalized key neither side has any more. */
    static final int MATCH = 0, MISMATCH = 1, MISSING_IN_STREAM = 2, MISSING_IN_BATCH = 3;

    /** {@code what} of the count rows {@link #reconcile} returns. */
    static final String FINALIZED = "finalized", LOGGED = "logged";

    private ReconcileStatements() {}

    /**
     * The parts of {@code [from, to)} that no succeeded batch run covered, as a multirange text ({@code "{}"}
     * when fully covered). `affected` runs are left out: their recorded range spans windows they did not
     * necessarily recompute.
     */
    static Sql uncovered(Scope scope) {
        // One row per gap, as epoch milliseconds (printed as ISO instants, the way users type them).
        return new Sql()
                .add("SELECT (extract(epoch FROM lower(gap)) * 1000)::bigint, (extract(epoch FROM upper(gap))"
                        + " * 1000)::bigint FROM unnest(tstzmultirange(tstzrange(")
                .timestamp(scope.fromMillis())
                .add(", ")
                .timestamp(scope.toMillis())
                .add(")) - coalesce((SELECT range_agg(tstzrange(range_from, range_to)) FROM "
                        + BatchRunsTable.TABLE + " WHERE status = 'succeeded' AND mode <> 'affected'"
                        + " AND range_from IS NOT NULL AND range_to IS NOT NULL AND range_from < ")
                .timestamp(scope.toMillis())
                .add(" AND range_to > ")
                .timestamp(scope.fromMillis())
                .add("), '{}'::tstzmultirange)) AS gap ORDER BY 1");
    }

    /**
     * The key-by-key part of a run, in one statement, over the windows that changed (all of them on a first run).
     * It reads the scope's stream, batch and
     * finalized rows once, as one three-way FULL JOIN by key kept in memory ({@code j}), and from it:
     * <ul>
     *   <li>inserts a {@code reconciliation_diffs} row for each key stream and batch do not agree on;</li>
     *   <li>with {@code apply}: makes the batch value final for every key of the scope — a plain insert for keys
     *       never finalized (the first run of a day inserts every key; no conflict handling needed, runs are
     *       serialized), an upsert for the few finalized to something else, nothing for the rest — and appends a
     *       {@code correction_log} entry for each served value that changes;</li>
     *   <li>without {@code apply} (a dry run): only counts what it would write;</li>
     *   <li>returns the counts of what it wrote or would write: {@code what} = {@value #FINALIZED} with the keys
     *       inserted or changed, or {@value #LOGGED} with the entries per {@code reason}.</li>
     * </ul>
     * The value a key served before is its finalized value if it has one (NULL if that hid it), else the
     * stream's (NULL if the stream never had it); after is the batch value (NULL: the batch has no such key, so it
     * is hidden).
     */
    static Sql reconcile(Scope scope, long runId, Tolerances tolerances, ZoneId zone, boolean apply) {
        return reconcile(scope, runId, tolerances, zone, apply, null, false);
    }

    /**
     * As {@link #reconcile(Scope, long, Tolerances, ZoneId, boolean)}, applying, with the keys inserted into
     * {@code newPartition} ({@link NewPartition}: no index, covering the scope) instead of
     * {@code window_corrections}. No key of the scope is finalized then: the join leaves the finalized side out and
     * keeps only the keys stream and batch disagree on; the table holds every batch row as it is already
     * ({@link NewPartition#create}), so only the keys only the stream has are inserted, in no order (the table's
     * indexes are built after the load). Its {@value #FINALIZED} count is only those keys (inserted as removed):
     * the caller adds the scope's batch rows as the survey counted them in the run's snapshot, and the check
     * afterwards compares every window's finalized key count with the batch's. The statement needs nothing
     * from the survey, so it can run while the survey is read.
     */
    static Sql reconcileIntoNewPartition(
            Scope scope, long runId, Tolerances tolerances, ZoneId zone, NewPartition newPartition) {
        return reconcile(scope, runId, tolerances, zone, true, newPartition, false);
    }

    /**
     * The run's diffs of a scope that has no finalized key ({@link ReconciliationDiffsTable#INSERT_COLUMNS}, in that
     * order), as a query that writes nothing: the stream and batch rows joined, the keys they disagree on. The join
     * is most of a first run's statement; as a read-only query it can run on a second connection in the run's
     * snapshot while the run's own connection fills and indexes the {@link NewPartition}, and the run then loads
     * the rows ({@code COPY}) and goes on with {@link #reconcileFromDiffsIntoNewPartition}.
     */
    static Sql differingKeys(Scope scope, long runId, Tolerances tolerances) {
        Sql sql = sides(scope);
        sql.add(" ");
        diffRows(sql, runId, tolerances);
        sql.add(" FROM (");
        joinWithoutFinalized(sql);
        return sql.add(") a WHERE st <> " + MATCH);
    }

    /**
     * As {@link #reconcileIntoNewPartition}, with the run's diffs of the scope already in {@code
     * reconciliation_diffs} ({@link #differingKeys}): the keys stream and batch disagree on are read from there, not
     * joined again. Logs the served values that change and hides the keys only the stream has; returns the same
     * counts.
     */
    static Sql reconcileFromDiffsIntoNewPartition(Scope scope, long runId, NewPartition newPartition) {
        return reconcile(scope, runId, null, null, true, newPartition, true);
    }

    /**
     * The finalized side's columns of {@code a} or {@code j} for a scope that has no finalized key: NULL values, not
     * finalized, to be written.
     */
    private static final String NOTHING_FINALIZED = eachMetric(m -> "NULL::" + m.sqlType() + " AS final_" + m.column())
            + ", NULL::boolean AS was_removed, false AS finalized, true AS needs_write";

    /** {@code WITH s, b}: the scope's stream and batch rows (not materialized: each is read once). */
    private static Sql sides(Scope scope) {
        Sql sql = new Sql()
                .add("WITH s AS NOT MATERIALIZED (SELECT " + KEY + ", window_end, revision, " + each(m -> m) + " FROM "
                        + StreamWindowMetricsTable.TABLE + " s WHERE ")
                .inScope("s.window_start", scope)
                .add(")");
        return sql.add(", b AS NOT MATERIALIZED (SELECT " + KEY + ", window_end, run_id, " + each(m -> m) + " FROM "
                        + BatchWindowMetricsTable.TABLE + " b WHERE ")
                .inScope("b.window_start", scope)
                .add(")");
    }

    /** The columns of a {@code reconciliation_diffs} row of run {@code runId} from a row of {@code a} or {@code j}. */
    private static void diffRows(Sql sql, long runId, Tolerances tolerances) {
        sql.add("SELECT ")
                .bigint(runId)
                .add(", window_start, window_end, campaign_id, channel_id, CASE st WHEN "
                        + MISMATCH + " THEN 'mismatch' WHEN " + MISSING_IN_STREAM + " THEN 'missing_in_stream' ELSE"
                        + " 'missing_in_batch' END, ");
        withinTolerance(sql, tolerances);
        sql.add(", stream_revision, " + each(m -> "stream_" + m) + ", " + each(m -> "batch_" + m));
    }

    private static Sql reconcile(
            Scope scope,
            long runId,
            Tolerances tolerances,
            ZoneId zone,
            boolean apply,
            NewPartition newPartition,
            boolean fromDiffs) {
        boolean fresh = newPartition != null;
        Sql sql;
        if (fromDiffs) {
            // The keys stream and batch disagree on, as this run recorded them; nothing is finalized in the scope.
            sql = new Sql()
                    .add("WITH a AS MATERIALIZED (SELECT " + KEY + ", window_end AS target_window_end,"
                            + " status <> 'missing_in_stream' AS in_stream, status <> 'missing_in_batch' AS in_batch, "
                            + each(m -> "stream_" + m) + ", " + each(m -> "batch_" + m) + ", " + NOTHING_FINALIZED
                            + " FROM " + ReconciliationDiffsTable.TABLE + " WHERE run_id = ")
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
            sql.add(", c AS (SELECT " + KEY + ", window_end, removed, " + each(m -> m) + " FROM "
                            + WindowCorrectionsTable.TABLE + " c WHERE ")
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
            sql.add(", diffs AS (INSERT INTO " + ReconciliationDiffsTable.TABLE + " ("
                    + ReconciliationDiffsTable.INSERT_COLUMNS + ") ");
            diffRows(sql, runId, tolerances);
            sql.add(" FROM a WHERE st <> " + MATCH + ")");
        }
        logEntries(sql);
        if (apply) {
            if (fresh) {
                // The table holds every batch row already, final as it is (V20); every key only the stream has is
                // hidden (removed, as zeros). In no particular order: the table's indexes are built after the load.
                sql.add(", inserted AS (INSERT INTO " + newPartition.name() + " ("
                                + WindowCorrectionsTable.INSERT_COLUMNS + ") SELECT window_start, target_window_end,"
                                + " campaign_id, channel_id, " + each(m -> "0") + ", true, ")
                        .bigint(runId)
                        .add(", NULL FROM a WHERE NOT in_batch)");
            } else {
                String values = "SELECT window_start, target_window_end, campaign_id, channel_id, "
                        + each(m -> "coalesce(batch_" + m + ", 0)") + ", NOT in_batch, ";
                sql.add(", inserted AS (INSERT INTO " + WindowCorrectionsTable.TABLE + " ("
                                + WindowCorrectionsTable.INSERT_COLUMNS + ") " + values)
                        .bigint(runId)
                        .add(", batch_run_id FROM j WHERE NOT finalized"
                                // In key order, so each row lands on the primary key's rightmost page (a new day is
                                // the newest key range) instead of a random one. The join yields batch rows in their
                                // physical order, which is random when a backfill wrote them so: inserting 1M rows in
                                // random order into the primary key alone measured 6.5 s against 3.0 s sorted (sort
                                // included).
                                + " ORDER BY window_start, campaign_id, channel_id RETURNING 1)");
                sql.add(", changed AS (INSERT INTO " + WindowCorrectionsTable.TABLE + " ("
                                + WindowCorrectionsTable.INSERT_COLUMNS + ") " + values)
                        .bigint(runId)
                        .add(", batch_run_id FROM a WHERE finalized AND needs_write"
                                + WindowCorrectionsTable.ON_CONFLICT_UPDATE_IF_CHANGED + " RETURNING 1)");
            }
            sql.add(", logged AS (INSERT INTO " + CorrectionLogTable.TABLE + " (" + CorrectionLogTable.INSERT_COLUMNS
                            + ") SELECT ")
                    .bigint(runId)
                    // In key order, each key's metrics in the metrics' order: a run's entries read the same
                    // whichever way its rows were joined.
                    .add(", " + KEY + ", metric, before_value, after_value, reason FROM entries ORDER BY " + KEY
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
    private static void joined(Sql sql) {
        String sIn = "s.window_start IS NOT NULL", bIn = "b.window_start IS NOT NULL";
        sql.add(", j AS MATERIALIZED (SELECT coalesce(b.window_start, s.window_start, c.window_start) AS window_start,"
                + " coalesce(b.campaign_id, s.campaign_id, c.campaign_id) AS campaign_id,"
                + " coalesce(b.channel_id, s.channel_id, c.channel_id) AS channel_id,"
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
                + " FROM s FULL JOIN b ON s.window_start = b.window_start AND s.campaign_id = b.campaign_id"
                + " AND s.channel_id = b.channel_id"
                + " FULL JOIN c ON c.window_start = coalesce(b.window_start, s.window_start)"
                + " AND c.campaign_id = coalesce(b.campaign_id, s.campaign_id)"
                + " AND c.channel_id = coalesce(b.channel_id, s.channel_id))");
    }

    /**
     * The rows of {@code j} for a scope that has no finalized key (a new partition's), as a subquery: the stream and
     * batch rows joined, the finalized side's columns NULL ({@code finalized} false, {@code needs_write} true).
     */
    private static void joinWithoutFinalized(Sql sql) {
        String sIn = "s.window_start IS NOT NULL", bIn = "b.window_start IS NOT NULL";
        sql.add("SELECT coalesce(b.window_start, s.window_start) AS window_start,"
                + " coalesce(b.campaign_id, s.campaign_id) AS campaign_id,"
                + " coalesce(b.channel_id, s.channel_id) AS channel_id,"
                + " coalesce(b.window_end, s.window_end) AS window_end,"
                + " coalesce(b.window_end, s.window_end) AS target_window_end,"
                + " s.revision AS stream_revision, b.run_id AS batch_run_id, " + sIn + " AS in_stream, " + bIn
                + " AS in_batch, " + status(sIn, bIn) + " AS st, "
                + each(m -> "s." + m + " AS stream_" + m) + ", " + each(m -> "b." + m + " AS batch_" + m) + ", "
                + NOTHING_FINALIZED
                + " FROM s FULL JOIN b ON s.window_start = b.window_start AND s.campaign_id = b.campaign_id"
                + " AND s.channel_id = b.channel_id");
    }

    /** {@code st} of {@code j}: how stream and batch compare ({@link #MATCH} ...). */
    private static String status(String sIn, String bIn) {
        return "CASE WHEN " + bIn + " THEN CASE WHEN " + sIn + " THEN CASE WHEN (" + each(m -> "s." + m) + ") = ("
                + each(m -> "b." + m) + ") THEN " + MATCH + " ELSE " + MISMATCH + " END ELSE " + MISSING_IN_STREAM
                + " END WHEN " + sIn + " THEN " + MISSING_IN_BATCH + " END";
    }

    /**
     * {@code entries}: one row per served value a finalization changes (what the correction log records), from
     * {@code a}, which already left out the keys never finalized whose stream values equal the batch's: most keys
     * of a first run, which only become final.
     */
    private static void logEntries(Sql sql) {
        sql.add(", entries AS (SELECT " + KEY + ", m.metric, m.metric_order, m.before_value, m.after_value,"
                + " CASE WHEN finalized THEN '" + Reason.BATCH_CHANGED.wireName() + "'"
                + " WHEN NOT in_batch THEN '" + Reason.MISSING_IN_BATCH.wireName() + "'"
                + " WHEN NOT in_stream THEN '" + Reason.MISSING_IN_STREAM.wireName() + "'"
                + " ELSE '" + Reason.STREAM_MISMATCH.wireName() + "' END AS reason"
                + " FROM a CROSS JOIN LATERAL (VALUES "
                + eachMetric(m -> "('" + m.column() + "', " + m.ordinal()
                        + ", CASE WHEN finalized THEN CASE WHEN was_removed THEN NULL ELSE final_"
                        + m.column() + " END ELSE stream_" + m.column() + " END::" + Metric.SPEND_SQL_TYPE + ", batch_"
                        + m.column() + "::" + Metric.SPEND_SQL_TYPE + ")")
                + ") AS m(metric, metric_order, before_value, after_value)"
                + " WHERE needs_write AND m.before_value IS DISTINCT FROM m.after_value)");
    }

    /**
     * Whether a key of {@code j} is within tolerance on every metric: {@code |stream - batch| <= absolute OR
     * |stream - batch| <= relative * |batch|}, a missing side counting as 0 (so a missing key is within only if
     * its values are that small). Relative tolerances compare as exact numerics.
     */
    private static void withinTolerance(Sql sql, Tolerances tolerances) {
        sql.add("(");
        for (Metric m : METRICS) {
            String d = "abs(coalesce(stream_" + m.column() + ", 0) - coalesce(batch_" + m.column() + ", 0))";
            Tolerances.Tolerance t = tolerances.of(m);
            sql.add(m.ordinal() == 0 ? "(" : " AND (")
                    .add(d + " <= ")
                    .bigint(t.absolute())
                    .add(" OR " + d + "::numeric <= ")
                    .numeric(t.relative())
                    .add(" * abs(coalesce(batch_" + m.column() + ", 0)))");
        }
        sql.add(")");
    }

    /** The sides {@link #windowSurvey} reads. */
    static final String STREAM = "stream", BATCH = "batch";

    /**
     * Which row hash {@link #fingerprint} uses, recorded with every window ({@code reconciled_windows
     * .fingerprint_version}, V16): 1 was {@code hash_record_extended} of the row, 2 is {@link #rowHash}. A window
     * recorded with another version counts as changed (it is reconciled key by key once and recorded again).
     */
    static final int FINGERPRINT_VERSION = 2;

    /**
     * The 64-bit hash of one row: a chain of per-column hashes, each column hashed by its type's own extended hash
     * function seeded with the hash of the columns before it, starting from {@code seed} (an expression: the stream's
     * revision, 0 for the batch, the correction's removed flag). About 30 % cheaper per row than
     * {@code hash_record_extended} of the same columns (no record to build and take apart), and every row of every
     * side is hashed by every run. A finalized row that is not removed hashes (seed 0) exactly as the batch row it
     * was finalized from: the served rows of a window can be compared with the batch's by fingerprint.
     */
    static String rowHash(String seed) {
        String h = "timestamptz_hash_extended(window_end, " + seed + ")";
        for (Metric m : METRICS) {
            h = (m.sqlType().equals(Metric.SPEND_SQL_TYPE) ? "hash_numeric_extended(" : "hashint8extended(")
                    + m.column() + ", " + h + ")";
        }
        return "hashtextextended(campaign_id, hashtextextended(channel_id, " + h + "))";
    }

    /**
     * The fingerprint of a group of rows: the XOR of {@link #rowHash} of each. Keys are unique per table, so no two
     * rows cancel out; any changed, added or removed row changes it (but for a 2^-64 chance), and the key count
     * beside it is a second check.
     */
    private static String fingerprint(String seed) {
        return "coalesce(bit_xor(" + rowHash(seed) + "), 0)";
    }

    /** The seed of {@link #rowHash} for a finalized row: a removed (hidden) row hashes unlike any batch row. */
    private static final String FINAL_SEED = "removed::int";

    /**
     * One side of the scope ({@link #STREAM} or {@link #BATCH}) per window, without joining keys: key count, first
     * and last window end, fingerprint, and for the batch the summed metrics (the stream's sums are the batch's plus
     * the differences of the run's diffs: {@link #diffCounts}). PostgreSQL aggregates ~1,440 groups a day in
     * parallel. One statement per side: under a UNION ALL the planner runs each side in one process instead.
     */
    static Sql windowSurvey(Scope scope, String side) {
        boolean stream = side.equals(STREAM);
        if (!stream && !side.equals(BATCH))
            throw new IllegalArgumentException("side must be stream or batch, got " + side);
        return new Sql()
                .add("SELECT window_start, count(*) AS keys, min(window_end) AS min_window_end,"
                        + " max(window_end) AS max_window_end, " + fingerprint(stream ? "revision" : "0")
                        + " AS fingerprint"
                        + (stream
                                ? ""
                                : ", "
                                        + eachMetric(
                                                m -> "sum(" + m.column() + ")::" + m.sqlType() + " AS " + m.column()))
                        + " FROM " + (stream ? StreamWindowMetricsTable.TABLE : BatchWindowMetricsTable.TABLE)
                        + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY window_start");
    }

    /**
     * The batch's key count and summed metrics per campaign-day of the scope ({@code day}: a bucket of {@code days}).
     * A scope within one day (a nightly run) groups by campaign alone: the planner then knows there are few groups
     * and aggregates in parallel, where it takes {@code width_bucket} for a near-unique key.
     */
    static Sql batchCampaignDays(Scope scope, ScopeDays days) {
        Sql sql = new Sql().add("SELECT campaign_id, ");
        if (days.startsMillis().size() == 1) sql.add("1");
        else
            sql.add("width_bucket(window_start, ")
                    .timestamps(days.startsMillis())
                    .add(")");
        return sql.add(" AS day, count(*) AS keys, "
                        + eachMetric(m -> "sum(" + m.column() + ")::" + m.sqlType() + " AS " + m.column()) + " FROM "
                        + BatchWindowMetricsTable.TABLE + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY 1, 2");
    }

    /**
     * Whether {@code window_writes} names a window of the scope: something wrote it in the stream's or the batch's
     * table since the run that last recorded it (or nothing recorded it yet). One index lookup.
     */
    static Sql windowsWritten(Scope scope) {
        return new Sql()
                .add("SELECT EXISTS (SELECT 1 FROM " + WindowWritesTable.TABLE + " WHERE ")
                .inScope("window_start", scope)
                .add(")");
    }

    /**
     * Deletes the rows of {@code window_writes} this transaction sees for the windows of the scope: the run records
     * those windows as it read them in the same snapshot. Rows committed after the snapshot are not seen, and stay.
     */
    static Sql forgetWindowWrites(Scope scope) {
        return new Sql()
                .add("DELETE FROM " + WindowWritesTable.TABLE + " WHERE ")
                .inScope("window_start", scope);
    }

    /** Per window of the scope, how many rows {@code window_corrections} holds and their fingerprint. */
    static Sql finalFingerprints(Scope scope) {
        return new Sql()
                .add("SELECT window_start, count(*) AS keys, " + fingerprint(FINAL_SEED) + " AS fingerprint FROM "
                        + WindowCorrectionsTable.TABLE + " WHERE ")
                .inScope("window_start", scope)
                .add(" GROUP BY window_start");
    }

    /**
     * Per window of the scope, what {@code window_corrections} now holds, read once after the run finalized it: the
     * rows served as final ({@code kept_*}: not removed) — key count, fingerprint and summed metrics, to be compared
     * with the batch's — and the removed rows' key count and fingerprint. The two fingerprints XORed are the window's
     * {@link #finalFingerprints} (a kept row's seed is 0, a removed row's 1), which the run records.
     */
    static Sql finalRows(Scope scope) {
        return finalRowsOf(WindowCorrectionsTable.TABLE)
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
    static Sql finalRowsOfNewPartition(NewPartition newPartition) {
        return finalRowsOf(newPartition.name()).add(" GROUP BY window_start");
    }

    private static Sql finalRowsOf(String table) {
        return new Sql()
                .add("SELECT window_start, count(*) FILTER (WHERE NOT removed) AS kept_keys, coalesce(bit_xor("
                        + rowHash("0") + ") FILTER (WHERE NOT removed), 0) AS kept_fingerprint, "
                        + eachMetric(m -> "coalesce(sum(" + m.column() + ") FILTER (WHERE NOT removed), 0)::"
                                + m.sqlType() + " AS " + m.column())
                        + ", count(*) FILTER (WHERE removed) AS removed_keys, coalesce(bit_xor(" + rowHash("1")
                        + ") FILTER (WHERE removed), 0) AS removed_fingerprint FROM " + table);
    }

    /**
     * How many keys of the scope run {@code runId} found only in the stream (its diffs) have no row in
     * {@code window_corrections}: {@code window_metrics} would still serve them from the stream, not final. With the
     * batch's keys all finalized (their fingerprint) and the stream's key count checked against the diffs, 0 means
     * the view serves no key of the scope as not final. Index lookups, one per such key. {@code table} as for
     * {@link #finalRows}.
     */
    static Sql streamKeysNotFinalized(Scope scope, long runId, String table) {
        return new Sql()
                .add("SELECT count(*) AS n FROM " + ReconciliationDiffsTable.TABLE + " d WHERE d.run_id = ")
                .bigint(runId)
                .add(" AND d.status = 'missing_in_batch' AND ")
                .inScope("d.window_start", scope)
                .add(" AND NOT EXISTS (SELECT 1 FROM " + table + " c WHERE c.window_start ="
                        + " d.window_start AND c.campaign_id = d.campaign_id AND c.channel_id = d.channel_id)");
    }

    /**
     * Copies into run {@code runId} the diffs of windows that did not change since an earlier run: window
     * {@code windows[i]} from run {@code fromRuns[i]}. Within tolerance is recomputed with this run's tolerances
     * (the values are the same, the settings may not be).
     */
    static Sql copyDiffs(
            long runId, java.util.List<Long> windows, java.util.List<Long> fromRuns, Tolerances tolerances) {
        Sql sql = new Sql()
                .add("INSERT INTO " + ReconciliationDiffsTable.TABLE + " (" + ReconciliationDiffsTable.INSERT_COLUMNS
                        + ") SELECT ")
                .bigint(runId)
                .add(", d.window_start, d.window_end, d.campaign_id, d.channel_id, d.status, ");
        withinTolerance(sql, tolerances);
        return sql.add(", d.stream_revision, " + ReconciliationDiffsTable.STREAM_COLUMNS + ", "
                        + ReconciliationDiffsTable.BATCH_COLUMNS + " FROM unnest(")
                .timestamps(windows)
                .add(", ")
                .bigints(fromRuns)
                .add(") AS u(window_start, run_id) JOIN " + ReconciliationDiffsTable.TABLE
                        + " d ON d.run_id = u.run_id AND d.window_start = u.window_start");
    }

    /**
     * Run {@code runId}'s diffs per window ({@code g = 1}) and per campaign-day ({@code g = 2}, {@code day}: a bucket
     * of {@code days}): how many of each status, how many beyond tolerance, and the summed stream − batch difference
     * of each metric (a missing side as 0). With the survey's batch rows that is every group's classification and
     * stream totals: keys that match add the same to both sides.
     */
    static Sql diffCounts(long runId, ScopeDays days) {
        return new Sql()
                .add("SELECT CASE WHEN GROUPING(window_start) = 0 THEN 1 ELSE 2 END AS g, window_start,"
                        + " campaign_id, day,"
                        + " count(*) FILTER (WHERE status = 'mismatch') AS mismatched,"
                        + " count(*) FILTER (WHERE status = 'missing_in_stream') AS missing_in_stream,"
                        + " count(*) FILTER (WHERE status = 'missing_in_batch') AS missing_in_batch,"
                        + " count(*) FILTER (WHERE NOT within_tolerance) AS beyond_tolerance, "
                        + eachMetric(m -> "sum(coalesce(stream_" + m.column() + ", 0) - coalesce(batch_" + m.column()
                                + ", 0))::" + m.sqlType() + " AS delta_" + m.column())
                        + " FROM (SELECT d.*, width_bucket(d.window_start, ")
                .timestamps(days.startsMillis())
                .add(") AS day FROM " + ReconciliationDiffsTable.TABLE + " d WHERE d.run_id = ")
                .bigint(runId)
                .add(") x GROUP BY GROUPING SETS ((window_start), (campaign_id, day))");
    }

    private static String each(Function<String, String> perColumn) {
        return eachMetric(m -> perColumn.apply(m.column()));
    }

    private static String eachMetric(Function<Metric, String> perMetric) {
        return Arrays.stream(METRICS).map(perMetric).collect(Collectors.joining(", "));
    }
}
