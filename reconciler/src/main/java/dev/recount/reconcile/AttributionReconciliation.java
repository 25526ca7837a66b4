package dev.recount.reconcile;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.sets.Measure;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.SetColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Reconciles the attribution metrics of one metric set's scope like its window metrics ({@link
 * ReconcileStatements#reconcile}), in the run's transaction, with one statement: compares the set's
 * {@code stream_attribution_metrics} with its {@code batch_attribution_metrics} per key (window of the click, the set's
 * dimensions), records a row in its {@code attribution_diffs} for each key they disagree on, and (unless a dry run)
 * makes the batch value final in its {@code attribution_corrections} — what its {@code attribution_metrics} view
 * serves — and appends an entry to its {@code correction_log}, under the attribution metric's name, for each served
 * value that changes. Exact: attribution has no tolerance settings.
 *
 * <p>A scope without any attribution row on either side (attribution off) compares nothing and writes nothing; a set
 * without attribution tables (it never declared attribution) is not compared at all ({@link #tablesExist}).
 */
final class AttributionReconciliation {
    private static final String[] COLUMNS = AttributionMetrics.COLUMNS;
    private static final String SPEND_TYPE = Measure.SUM_SQL_TYPE;

    private AttributionReconciliation() {}

    /**
     * Whether the set has attribution tables: the default set always has (V13), another set once migrate created them
     * for it (it declared attribution). A set that declared attribution once and no longer does keeps its tables and
     * rows, and they are still reconciled, as the default set's are whatever {@code attribution.enabled} says.
     */
    static boolean tablesExist(Connection conn, SetTables tables) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, tables.streamAttributionMetrics());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * What a run found for attribution.
     *
     * @param corrections correction-log entries appended (a dry run: that would be), per reason
     */
    record Outcome(
            KeyCounts counts,
            AttributionMetrics stream,
            AttributionMetrics batch,
            long keysFinalized,
            Map<Reason, Long> corrections) {
        static final Outcome NONE = new Outcome(
                new KeyCounts(0, 0, 0, 0, 0, 0), AttributionMetrics.ZERO, AttributionMetrics.ZERO, 0, Map.of());

        long valuesCorrected() {
            return corrections.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    static Outcome reconcile(Connection conn, SetTables tables, Scope scope, long runId, boolean apply)
            throws SQLException {
        Outcome[] result = {Outcome.NONE};
        Map<Reason, Long> corrections = new EnumMap<>(Reason.class);
        long[] finalized = {0};
        try (PreparedStatement ps = statement(tables, scope, runId, apply).prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String what = rs.getString("what");
                if (what == null) {
                    result[0] = new Outcome(
                            new KeyCounts(
                                    rs.getLong("compared"),
                                    rs.getLong("matched"),
                                    rs.getLong("mismatched"),
                                    rs.getLong("missing_in_stream"),
                                    rs.getLong("missing_in_batch"),
                                    rs.getLong("compared") - rs.getLong("matched")),
                            AttributionRow.readMetrics(rs, "stream_"),
                            AttributionRow.readMetrics(rs, "batch_"),
                            0,
                            Map.of());
                } else if (what.equals(ReconcileStatements.FINALIZED)) {
                    finalized[0] = rs.getLong("n");
                } else {
                    corrections.put(Reason.of(rs.getString("reason")), rs.getLong("n"));
                }
            }
        }
        Outcome o = result[0];
        return new Outcome(o.counts(), o.stream(), o.batch(), finalized[0], corrections);
    }

    private static Sql statement(SetTables tables, Scope scope, long runId, boolean apply) {
        SetColumns columns = new SetColumns(tables);
        String key = columns.keyList();
        List<String> dimensions = tables.dimensionNames();
        Sql sql = new Sql()
                .add("WITH s AS (SELECT " + key + ", window_end, revision, " + each(c -> c) + " FROM "
                        + tables.streamAttributionMetrics() + " s WHERE ")
                .inScope("s.window_start", scope)
                .add(")");
        sql.add(", b AS (SELECT " + key + ", window_end, " + each(c -> c) + " FROM " + tables.batchAttributionMetrics()
                        + " b WHERE ")
                .inScope("b.window_start", scope)
                .add(")");
        sql.add(", c AS (SELECT " + key + ", window_end, removed, " + each(c -> c) + " FROM "
                        + tables.attributionCorrections() + " c WHERE ")
                .inScope("c.window_start", scope)
                .add(")");
        String sIn = "s.window_start IS NOT NULL", bIn = "b.window_start IS NOT NULL";
        sql.add(", j AS MATERIALIZED (SELECT coalesce(b.window_start, s.window_start, c.window_start) AS window_start, "
                + dimensions.stream()
                        .map(d -> "coalesce(b." + d + ", s." + d + ", c." + d + ") AS " + d)
                        .collect(Collectors.joining(", "))
                + ", coalesce(b.window_end, s.window_end, c.window_end) AS window_end,"
                + " s.revision AS stream_revision, " + sIn + " AS in_stream, " + bIn + " AS in_batch,"
                + " CASE WHEN " + bIn + " THEN CASE WHEN " + sIn + " THEN CASE WHEN (" + each(c -> "s." + c) + ") = ("
                + each(c -> "b." + c) + ") THEN " + ReconcileStatements.MATCH + " ELSE " + ReconcileStatements.MISMATCH
                + " END ELSE " + ReconcileStatements.MISSING_IN_STREAM + " END WHEN " + sIn + " THEN "
                + ReconcileStatements.MISSING_IN_BATCH + " END AS st, "
                + each(c -> "s." + c + " AS stream_" + c) + ", " + each(c -> "b." + c + " AS batch_" + c) + ", "
                + each(c -> "c." + c + " AS final_" + c) + ", c.removed AS was_removed,"
                + " c.window_start IS NOT NULL AS finalized,"
                + " c.window_start IS NULL OR (c.window_end, " + each(c -> "c." + c) + ", c.removed) IS DISTINCT FROM"
                + " (coalesce(b.window_end, s.window_end, c.window_end), " + each(c -> "coalesce(b." + c + ", 0)")
                + ", NOT " + bIn + ") AS needs_write"
                + " FROM s FULL JOIN b ON " + columns.sameKey("s", "b")
                + " FULL JOIN c ON c.window_start = coalesce(b.window_start, s.window_start)"
                + dimensions.stream()
                        .map(d -> " AND c." + d + " = coalesce(b." + d + ", s." + d + ")")
                        .collect(Collectors.joining())
                + ")");
        sql.add(", diffs AS (INSERT INTO " + tables.attributionDiffs() + " (run_id, " + columns.windowList() + ","
                        + " status, within_tolerance, stream_revision, " + each(c -> "stream_" + c) + ", "
                        + each(c -> "batch_" + c)
                        + ") SELECT ")
                .bigint(runId)
                .add(", " + columns.windowList() + ", CASE st WHEN "
                        + ReconcileStatements.MISMATCH + " THEN 'mismatch' WHEN "
                        + ReconcileStatements.MISSING_IN_STREAM
                        + " THEN 'missing_in_stream' ELSE 'missing_in_batch' END, false, stream_revision, "
                        + each(c -> "stream_" + c) + ", " + each(c -> "batch_" + c) + " FROM j WHERE st <> "
                        + ReconcileStatements.MATCH + " RETURNING 1)");
        sql.add(", entries AS (SELECT " + key + ", m.metric, m.before_value, m.after_value,"
                + " CASE WHEN finalized THEN '" + Reason.BATCH_CHANGED.wireName() + "'"
                + " WHEN NOT in_batch THEN '" + Reason.MISSING_IN_BATCH.wireName() + "'"
                + " WHEN NOT in_stream THEN '" + Reason.MISSING_IN_STREAM.wireName() + "'"
                + " ELSE '" + Reason.STREAM_MISMATCH.wireName() + "' END AS reason"
                + " FROM j CROSS JOIN LATERAL (VALUES "
                + Arrays.stream(COLUMNS)
                        .map(c -> "('" + c + "', CASE WHEN finalized THEN CASE WHEN was_removed THEN NULL"
                                + " ELSE final_" + c + " END ELSE stream_" + c + " END::" + SPEND_TYPE
                                + ", CASE WHEN in_batch"
                                + " THEN batch_" + c + " END::" + SPEND_TYPE + ")")
                        .collect(Collectors.joining(", "))
                + ") AS m(metric, before_value, after_value)"
                + " WHERE needs_write AND m.before_value IS DISTINCT FROM m.after_value)");
        if (apply) {
            sql.add(", finalized AS (INSERT INTO " + tables.attributionCorrections() + " (" + key + ", window_end, "
                            + each(c -> c) + ", removed, reconciliation_run_id, finalized_at) SELECT " + key
                            + ", window_end, "
                            + each(c -> "coalesce(batch_" + c + ", 0)") + ", NOT in_batch, ")
                    .bigint(runId)
                    .add(", now() FROM j WHERE needs_write ON CONFLICT (" + key + ") DO UPDATE SET"
                            + " window_end = EXCLUDED.window_end, " + each(c -> c + " = EXCLUDED." + c)
                            + ", removed = EXCLUDED.removed, reconciliation_run_id = EXCLUDED.reconciliation_run_id,"
                            + " finalized_at = EXCLUDED.finalized_at RETURNING 1)");
            CorrectionLogTable log = new CorrectionLogTable(tables);
            sql.add(", logged AS (INSERT INTO " + log.table() + " (" + log.insertColumns() + ") SELECT ")
                    .bigint(runId)
                    .add(", " + key + ", metric, before_value, after_value, reason"
                            + " FROM entries RETURNING reason)");
        }
        sql.add(" SELECT NULL::text AS what, NULL::text AS reason, NULL::bigint AS n, count(*) AS compared,"
                + " count(*) FILTER (WHERE st = " + ReconcileStatements.MATCH + ") AS matched,"
                + " count(*) FILTER (WHERE st = " + ReconcileStatements.MISMATCH + ") AS mismatched,"
                + " count(*) FILTER (WHERE st = " + ReconcileStatements.MISSING_IN_STREAM + ") AS missing_in_stream,"
                + " count(*) FILTER (WHERE st = " + ReconcileStatements.MISSING_IN_BATCH + ") AS missing_in_batch,"
                + " (SELECT count(*) FROM diffs) AS diffs, "
                + each(c -> "coalesce(sum(stream_" + c + "), 0)::" + type(c) + " AS stream_" + c) + ", "
                + each(c -> "coalesce(sum(batch_" + c + "), 0)::" + type(c) + " AS batch_" + c)
                + " FROM j WHERE st IS NOT NULL");
        String nulls = "NULL, NULL, NULL, NULL, NULL, NULL, " + "NULL, ".repeat(2 * COLUMNS.length);
        String counts = apply
                ? " UNION ALL SELECT '" + ReconcileStatements.FINALIZED + "', NULL, (SELECT count(*) FROM finalized), "
                        + nulls.substring(0, nulls.length() - 2)
                        + " UNION ALL SELECT '" + ReconcileStatements.LOGGED + "', reason, count(*), "
                        + nulls.substring(0, nulls.length() - 2) + " FROM logged GROUP BY reason"
                : " UNION ALL SELECT '" + ReconcileStatements.FINALIZED + "', NULL, count(*), "
                        + nulls.substring(0, nulls.length() - 2) + " FROM j WHERE needs_write"
                        + " UNION ALL SELECT '" + ReconcileStatements.LOGGED + "', reason, count(*), "
                        + nulls.substring(0, nulls.length() - 2) + " FROM entries GROUP BY reason";
        return sql.add(counts);
    }

    private static String type(String column) {
        return column.equals(COLUMNS[3]) ? SPEND_TYPE : "bigint";
    }

    private static String each(Function<String, String> perColumn) {
        return Arrays.stream(COLUMNS).map(perColumn).collect(Collectors.joining(", "));
    }
}
