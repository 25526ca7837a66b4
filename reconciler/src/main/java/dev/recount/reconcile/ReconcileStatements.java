package dev.recount.reconcile;

import dev.recount.core.metrics.Metric;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowCorrectionsTable;
import dev.recount.db.tables.WindowMetricsView;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The reconciler's set-based SQL. Each run is three statements, whatever the number of keys: compare (one
 * FULL OUTER JOIN that also inserts the diffs and aggregates the totals), correct (upsert the finalized values
 * and append the log, both from one join), and verify (what the serving view now shows).
 */
final class ReconcileStatements {
    private static final Metric[] METRICS = Metric.values();
    private static final String KEY = "window_start, campaign_id, channel_id";

    private ReconcileStatements() {}

    /**
     * The parts of {@code [from, to)} that no succeeded batch run covered, as a multirange text ({@code "{}"}
     * when fully covered). `affected` runs are left out: their recorded range spans windows they did not
     * necessarily recompute.
     */
    static Sql uncovered(Scope scope) {
        return new Sql().add("SELECT (tstzmultirange(tstzrange(").timestamp(scope.fromMillis()).add(", ")
                .timestamp(scope.toMillis()).add(")) - coalesce((SELECT range_agg(tstzrange(range_from, range_to)) FROM "
                        + BatchRunsTable.TABLE + " WHERE status = 'succeeded' AND mode <> 'affected'"
                        + " AND range_from IS NOT NULL AND range_to IS NOT NULL AND range_from < ")
                .timestamp(scope.toMillis()).add(" AND range_to > ").timestamp(scope.fromMillis())
                .add("), '{}'::tstzmultirange))::text");
    }

    /**
     * Compares every key of the scope. Inserts a {@code reconciliation_diffs} row for each key that is not an
     * exact match and returns one row per grouping set: the range ({@code g = 0}), each window ({@code g = 1})
     * and each campaign-day ({@code g = 2}), each with key counts by status and summed stream and batch metrics.
     */
    static Sql compare(Scope scope, long runId, Tolerances tolerances, ZoneId zone) {
        Sql sql = new Sql().add("WITH ");
        streamAndBatch(sql, scope);
        sql.add(", j AS (SELECT coalesce(s.window_start, b.window_start) AS window_start,"
                + " coalesce(b.window_end, s.window_end) AS window_end,"
                + " coalesce(s.campaign_id, b.campaign_id) AS campaign_id,"
                + " coalesce(s.channel_id, b.channel_id) AS channel_id, s.revision AS stream_revision, "
                + each(m -> "s." + m + " AS stream_" + m) + ", " + each(m -> "b." + m + " AS batch_" + m) + ","
                + " CASE WHEN s.window_start IS NULL THEN 'missing_in_stream'"
                + " WHEN b.window_start IS NULL THEN 'missing_in_batch'"
                + " WHEN (" + each(m -> "s." + m) + ") = (" + each(m -> "b." + m) + ") THEN 'match'"
                + " ELSE 'mismatch' END AS status, ");
        // A missing side counts as 0, so a key missing on one side is within only if its values are that small.
        for (Metric m : METRICS) {
            String d = "abs(coalesce(s." + m.column() + ", 0) - coalesce(b." + m.column() + ", 0))";
            Tolerances.Tolerance t = tolerances.of(m);
            sql.add(m.ordinal() == 0 ? "(" : " AND ").add("(" + d + " <= ").bigint(t.absolute())
                    .add(" OR " + d + "::numeric <= ").numeric(t.relative())
                    .add(" * abs(coalesce(b." + m.column() + ", 0)))");
        }
        sql.add(") AS within_tolerance"
                + " FROM s FULL OUTER JOIN b ON s.window_start = b.window_start AND s.campaign_id = b.campaign_id"
                + " AND s.channel_id = b.channel_id)");
        sql.add(", diffs AS (INSERT INTO " + ReconciliationDiffsTable.TABLE + " (" + ReconciliationDiffsTable.INSERT_COLUMNS
                + ") SELECT ").bigint(runId).add(", window_start, window_end, campaign_id, channel_id, status,"
                + " within_tolerance, stream_revision, " + each(m -> "stream_" + m) + ", " + each(m -> "batch_" + m)
                + " FROM j WHERE status <> 'match')");
        sql.add(" SELECT CASE WHEN GROUPING(window_start) = 0 THEN 1 WHEN GROUPING(campaign_id) = 0 THEN 2 ELSE 0 END AS g,"
                + " window_start, max(window_end) AS window_end, campaign_id, day,"
                + " count(*) AS compared,"
                + " count(*) FILTER (WHERE status = 'match') AS matched,"
                + " count(*) FILTER (WHERE status = 'mismatch') AS mismatched,"
                + " count(*) FILTER (WHERE status = 'missing_in_stream') AS missing_in_stream,"
                + " count(*) FILTER (WHERE status = 'missing_in_batch') AS missing_in_batch,"
                + " count(*) FILTER (WHERE NOT within_tolerance) AS beyond_tolerance, "
                + eachMetric(m -> "coalesce(sum(stream_" + m.column() + "), 0)::" + m.sqlType() + " AS stream_" + m.column()) + ", "
                + eachMetric(m -> "coalesce(sum(batch_" + m.column() + "), 0)::" + m.sqlType() + " AS batch_" + m.column())
                + " FROM (SELECT j.*, (j.window_start AT TIME ZONE ").text(zone.getId()).add(")::date AS day FROM j) x"
                + " GROUP BY GROUPING SETS ((), (window_start), (campaign_id, day))");
        return sql;
    }

    /**
     * Makes the batch result authoritative for every key of the scope, and logs each served value it changes.
     * A key's served value before is its previous finalized value if it has one (NULL if that hid it), else the
     * stream's (NULL if the stream never had it); after is the batch value (NULL: the batch has no such key, so
     * it is hidden). Keys already finalized to exactly the batch value are not touched. Returns rows
     * {@code (what, reason, n)}: {@code ('finalized', NULL, rows written)} and {@code ('logged', reason, entries)}.
     */
    static Sql correct(Scope scope, long runId) {
        Sql sql = new Sql().add("WITH ");
        streamAndBatch(sql, scope);
        sql.add(", c AS (SELECT * FROM " + WindowCorrectionsTable.TABLE + " c WHERE ").inScope("c.window_start", scope).add(")");
        sql.add(", k AS (SELECT coalesce(b.window_start, s.window_start, c.window_start) AS window_start,"
                + " coalesce(b.campaign_id, s.campaign_id, c.campaign_id) AS campaign_id,"
                + " coalesce(b.channel_id, s.channel_id, c.channel_id) AS channel_id,"
                + " coalesce(b.window_end, s.window_end, c.window_end) AS window_end,"
                + " b.window_start IS NOT NULL AS in_batch, s.window_start IS NOT NULL AS in_stream,"
                + " c.window_start IS NOT NULL AS finalized, c.removed AS was_removed, c.window_end AS final_window_end,"
                + " b.run_id AS batch_run_id, "
                + each(m -> "b." + m + " AS batch_" + m) + ", " + each(m -> "s." + m + " AS stream_" + m) + ", "
                + each(m -> "c." + m + " AS final_" + m)
                + " FROM s FULL OUTER JOIN b ON s.window_start = b.window_start AND s.campaign_id = b.campaign_id"
                + " AND s.channel_id = b.channel_id"
                + " FULL OUTER JOIN c ON c.window_start = coalesce(b.window_start, s.window_start)"
                + " AND c.campaign_id = coalesce(b.campaign_id, s.campaign_id)"
                + " AND c.channel_id = coalesce(b.channel_id, s.channel_id))");
        // v: only keys whose finalized row must be written (never finalized, or finalized to something else
        // than the batch value now), with the value window_metrics served before this run.
        String batchValues = each(m -> "coalesce(batch_" + m + ", 0)");
        sql.add(", v AS (SELECT k.*, " + each(m -> "CASE WHEN finalized THEN CASE WHEN was_removed THEN NULL ELSE final_"
                        + m + " END ELSE stream_" + m + " END AS before_" + m)
                + ", CASE WHEN finalized THEN '" + CorrectionLogTable.Reason.BATCH_CHANGED.wireName() + "'"
                + " WHEN NOT in_batch THEN '" + CorrectionLogTable.Reason.MISSING_IN_BATCH.wireName() + "'"
                + " WHEN NOT in_stream THEN '" + CorrectionLogTable.Reason.MISSING_IN_STREAM.wireName() + "'"
                + " ELSE '" + CorrectionLogTable.Reason.STREAM_MISMATCH.wireName() + "' END AS reason FROM k"
                + " WHERE NOT finalized OR (final_window_end, " + each(m -> "final_" + m) + ", was_removed)"
                + " IS DISTINCT FROM (window_end, " + batchValues + ", NOT in_batch))");
        sql.add(", logged AS (INSERT INTO " + CorrectionLogTable.TABLE + " (" + CorrectionLogTable.INSERT_COLUMNS + ")"
                + " SELECT ").bigint(runId).add(", v.window_start, v.campaign_id, v.channel_id, m.metric, m.before_value,"
                + " m.after_value, v.reason FROM v CROSS JOIN LATERAL (VALUES "
                + Arrays.stream(METRICS).map(m -> "('" + m.column() + "', before_" + m.column() + ", batch_" + m.column() + ")")
                        .collect(Collectors.joining(", "))
                + ") AS m(metric, before_value, after_value)"
                // The row test is cheap and skips the per-metric rows of keys whose served values stay (most of them).
                + " WHERE (" + each(m -> "before_" + m) + ") IS DISTINCT FROM (" + each(m -> "batch_" + m) + ")"
                + " AND m.before_value IS DISTINCT FROM m.after_value RETURNING reason)");
        sql.add(", finalized_rows AS (INSERT INTO " + WindowCorrectionsTable.TABLE + " ("
                + WindowCorrectionsTable.INSERT_COLUMNS + ") SELECT window_start, window_end, campaign_id, channel_id, "
                + batchValues + ", NOT in_batch, ").bigint(runId).add(", batch_run_id FROM v"
                + WindowCorrectionsTable.ON_CONFLICT_UPDATE_IF_CHANGED + " RETURNING 1)");
        sql.add(" SELECT 'finalized' AS what, NULL AS reason, count(*) AS n FROM finalized_rows"
                + " UNION ALL SELECT 'logged', reason, count(*) FROM logged GROUP BY reason");
        return sql;
    }

    /** The summed metrics {@code window_metrics} serves for the scope, and how many of its keys are not final. */
    static Sql served(Scope scope) {
        return new Sql().add("SELECT " + eachMetric(m -> "coalesce(sum(" + m.column() + "), 0)::" + m.sqlType() + " AS " + m.column())
                + ", count(*) FILTER (WHERE NOT is_final) AS not_final FROM " + WindowMetricsView.VIEW + " w WHERE ")
                .inScope("w.window_start", scope);
    }

    private static void streamAndBatch(Sql sql, Scope scope) {
        sql.add("s AS (SELECT " + KEY + ", window_end, revision, " + each(m -> m) + " FROM "
                + StreamWindowMetricsTable.TABLE + " s WHERE ").inScope("s.window_start", scope).add(")");
        sql.add(", b AS (SELECT " + KEY + ", window_end, run_id, " + each(m -> m) + " FROM "
                + BatchWindowMetricsTable.TABLE + " b WHERE ").inScope("b.window_start", scope).add(")");
    }

    private static String each(Function<String, String> perColumn) {
        return eachMetric(m -> perColumn.apply(m.column()));
    }

    private static String eachMetric(Function<Metric, String> perMetric) {
        return Arrays.stream(METRICS).map(perMetric).collect(Collectors.joining(", "));
    }
}
