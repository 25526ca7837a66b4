package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A set declared exactly as the default set ({@code dflt_copy}) gets, from {@code SetSchema}, objects of exactly the
 * shape migrations V2-V26 left for the default's: the same columns, checks, keys, indexes, partitioning, triggers,
 * trigger functions, privileges, view columns and function signatures, and the same answers from its serving view,
 * rollups, sliding sums and partition functions over the same rows. Fails when a migration changes a default object
 * and the generator does not follow, or the generator drifts on its own.
 */
class SetSchemaDriftITCase {
    /** The default set's definition (core's default-set.yaml) under another name, with attribution. */
    static final String DEFAULT_COPY = """
            version: 1
            sets:
              - name: default
              - name: dflt_copy
                dimensions: [campaign_id, channel_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: conversions, kind: count, where: {event_type: conversion}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                  - {name: events, kind: count}
                ratios:
                  - {name: ctr, numerator: clicks, denominator: impressions}
                  - {name: cvr, numerator: conversions, denominator: clicks}
                  - {name: cpc_micros, numerator: spend_micros, denominator: clicks}
                  - {name: cpm_micros, numerator: spend_micros, denominator: impressions, per: 1000}
                  - {name: cost_per_conversion_micros, numerator: spend_micros, denominator: conversions}
                rollups: [hourly, daily, sliding]
                attribution: true
            """;

    static LocalStack stack;
    static String schema;
    static SetTables defaults;
    static SetTables copy;

    @BeforeAll
    static void migrateBoth() {
        stack = LocalStack.shared();
        MetricSets sets = MetricSets.parse(DEFAULT_COPY, "drift.yaml", RecountConfig.defaults());
        MetricSet declared = sets.set("dflt_copy").orElseThrow();
        MetricSet reference = sets.defaultSet().orElseThrow();
        assertThat(declared.fingerprint())
                .as("the copy declares the default's dimensions and measures")
                .isEqualTo(reference.fingerprint());
        assertThat(declared.ratios()).isEqualTo(reference.ratios());
        assertThat(declared.rollups()).isEqualTo(reference.rollups());
        schema = stack.createMigratedSchema("drift", sets);
        defaults = new SetTables(reference);
        copy = new SetTables(declared);
    }

    @Test
    void everyObjectHasTheShapeOfTheDefaultSetsObjectOfThatName() throws SQLException {
        assertSameShapes();
    }

    /**
     * The same rows in both sets' tables: the serving views, rollups, sliding sums and reconciled ranges answer alike,
     * the row triggers log the same windows, and the partition functions make partitions of the same shape holding
     * the same corrections.
     */
    @Test
    void bothAnswerAlikeOverTheSameRows() throws SQLException {
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            // One transaction: every now() (updated_at, computed_at, finalized_at) is the same instant in both sets.
            c.setAutoCommit(false);
            st.execute("INSERT INTO reconciliation_runs (range_from, range_to, status, metric_sets) VALUES"
                    + " ('2026-11-28T10:00Z', '2026-11-28T11:00Z', 'succeeded', '{default,dflt_copy}')");
            for (SetTables t : List.of(defaults, copy)) {
                st.execute("INSERT INTO " + t.streamWindowMetrics() + " (window_start, window_end, campaign_id,"
                        + " channel_id, impressions, clicks, conversions, spend_micros, events, revision) VALUES"
                        + " ('2026-11-28T10:00Z', '2026-11-28T10:01Z', 'c1', 'web', 100, 5, 1,"
                        + " 12345678901234567890123, 106, 1),"
                        + " ('2026-11-28T10:01Z', '2026-11-28T10:02Z', 'c1', 'app', 10, 0, 0, 0, 10, 2),"
                        + " ('2026-11-28T10:05Z', '2026-11-28T10:06Z', 'c2', 'web', 3, 1, 1, 7, 5, 1)");
                st.execute("INSERT INTO " + t.batchWindowMetrics() + " (window_start, window_end, campaign_id,"
                        + " channel_id, impressions, clicks, conversions, spend_micros, events, run_id) VALUES"
                        + " ('2026-11-28T10:00Z', '2026-11-28T10:01Z', 'c1', 'web', 101, 5, 1,"
                        + " 12345678901234567890124, 107, 7),"
                        + " ('2026-11-28T10:02Z', '2026-11-28T10:03Z', 'c3', 'web', 0, 2, 0, 999, 2, 7),"
                        + " ('2026-11-28T10:07Z', '2026-11-28T10:08Z', 'c2', 'web', 1, 0, 0, 0, 1, 7)");
                st.execute("INSERT INTO " + t.streamAttributionMetrics() + " (window_start, window_end, campaign_id,"
                        + " channel_id, attributed_clicks, attributed_conversions, unattributed_clicks,"
                        + " attributed_spend_micros, revision) VALUES"
                        + " ('2026-11-28T10:00Z', '2026-11-28T10:01Z', 'c1', 'web', 3, 1, 2, 500, 1)");
                String partition = MigratedSchemas.text(
                        c,
                        "SELECT " + t.windowCorrectionsNewPartitionOfBatch() + "('2026-11-28T00:00Z',"
                                + " '2026-11-29T00:00Z', (SELECT max(run_id) FROM reconciliation_runs),"
                                + " '2026-11-28T10:00Z', '2026-11-28T10:03Z', NULL)");
                assertThat(partition).isEqualTo(t.windowCorrectionsPartitionPrefix() + "20261128t0000_20261129t0000");
                st.execute("SELECT " + t.windowCorrectionsIndexPartition() + "('" + partition + "')");
                st.execute("SELECT " + t.windowCorrectionsAttachPartition() + "('" + partition + "')");
            }
            c.commit();

            Map<String, Function<SetTables, String>> answers = Map.of(
                    "window_metrics", t -> "SELECT * FROM " + t.windowMetrics(),
                    "hourly_metrics",
                            t -> "SELECT * FROM " + t.hourlyMetrics() + "('2026-11-28T09:30Z', '2026-11-28T12:00Z')",
                    "daily_metrics", t -> "SELECT * FROM " + t.dailyMetrics() + "('2026-11-28', '2026-11-29')",
                    "sliding_metrics",
                            t -> "SELECT * FROM " + t.slidingMetrics()
                                    + "(5, '2026-11-28T10:00Z', '2026-11-28T10:12Z')",
                    "reconciled_ranges", t -> "SELECT " + t.reconciledRanges() + "()",
                    "window_corrections", t -> "SELECT * FROM " + t.windowCorrections(),
                    "window_writes", t -> "SELECT side, window_start FROM " + t.windowWrites(),
                    "window_corrections_writes", t -> "SELECT operation FROM " + t.windowCorrectionsWrites(),
                    "attribution_metrics", t -> "SELECT * FROM " + t.attributionMetrics());
            for (Map.Entry<String, Function<SetTables, String>> q : answers.entrySet()) {
                String expected = rows(c, q.getValue().apply(defaults));
                assertThat(expected).as(q.getKey() + " of the default set").isNotBlank();
                assertThat(rows(c, q.getValue().apply(copy))).as(q.getKey()).isEqualTo(expected);
            }
            assertThat(rows(c, "SELECT is_final, source FROM " + copy.windowMetrics()))
                    .as("finalized from the partition, stream, batch only")
                    .isEqualTo("(f,batch)\n(f,stream)\n(f,stream)\n(t,batch)\n(t,batch)");
        }
        // The new partitions too.
        assertSameShapes();
    }

    private static void assertSameShapes() throws SQLException {
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            Map<String, String> expected = CatalogShape.of(c, schema, defaults);
            Map<String, String> actual = CatalogShape.of(c, schema, copy);
            assertThat(expected)
                    .as("the default set's objects")
                    .containsKeys(
                            "stream_window_metrics",
                            "batch_window_metrics_staging",
                            "window_corrections",
                            "window_corrections_default",
                            "window_corrections_new_partition_of_batch()",
                            "window_rows_written()",
                            "correction_log_is_append_only()",
                            "window_metrics",
                            "period_metrics_row",
                            "sliding_metrics()",
                            "recent_sliding_metrics",
                            "attribution_corrections");
            assertThat(actual.keySet())
                    .as("dflt_copy's objects, by their default-set names")
                    .containsExactlyInAnyOrderElementsOf(expected.keySet());
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertThat(actual.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    /** Every row of {@code query} as text, sorted. */
    static String rows(Connection c, String query) throws SQLException {
        String all = MigratedSchemas.text(
                c, "SELECT coalesce(string_agg(q::text, E'\\n' ORDER BY q::text), '') FROM (" + query + ") q");
        return all == null ? "" : all;
    }
}
