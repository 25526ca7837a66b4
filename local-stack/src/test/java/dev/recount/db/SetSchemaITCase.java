package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.Identifiers;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A set with other dimensions and measures than the default's (campaign and a declared slot; a sum over a declared
 * integer attribute) gets working objects: each component's login does its work on them exactly as on the default's
 * and nothing more, the triggers log the windows written, the reconciler finalizes a partition of batch rows, finance
 * reads the view and rollups. And a set of the longest names allowed gets every object under its full name.
 */
class SetSchemaITCase {
    static final String SETS = """
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              quantity: {type: integer, default: 0}
            sets:
              - name: default
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: units, kind: sum, field: quantity}
                ratios:
                  - {name: ctr, numerator: clicks, denominator: impressions}
                  - {name: units_per_mille, numerator: units, denominator: impressions, per: 1000}
                rollups: [hourly, sliding]
                attribution: true
            """;

    /** 3 * 2^63: more than a bigint holds, as a sum of three events of the largest value may. */
    static final String HUGE = "27670116110564327424";

    static LocalStack stack;
    static MetricSets sets;
    static String schema;
    static SetTables slot;
    static SetTables defaults;

    @BeforeAll
    static void migrate() {
        stack = LocalStack.shared();
        sets = MetricSets.parse(SETS, "sets.yaml", RecountConfig.defaults());
        schema = stack.createMigratedSchema("sets", sets);
        slot = new SetTables(sets.set("campaign_slot").orElseThrow());
        defaults = new SetTables(sets.defaultSet().orElseThrow());
    }

    @Test
    void eachRoleHoldsOnTheSetsObjectsExactlyWhatItHoldsOnTheDefaultsObjects() throws SQLException {
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            Map<String, String> expected = CatalogShape.privileges(c, schema, defaults);
            Map<String, String> actual = CatalogShape.privileges(c, schema, slot);
            // The set declares no daily rollup: its function is the one object it does not have. The partitions a
            // reconciliation made (another test's) have their own test.
            expected.remove("daily_metrics()");
            actual.keySet().removeIf(name -> name.matches("window_corrections_[0-9]{8}t.*"));
            assertThat(actual.keySet()).containsExactlyInAnyOrderElementsOf(expected.keySet());
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertThat(actual.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    /**
     * Next to a set's own columns (dimensions, measures, ratios), its tables and views have only columns the
     * definitions may not take (core's Identifiers.RESERVED_COLUMNS, which core refuses, and the comparison's prefixed ones), so no
     * definition can make a column twice.
     */
    @Test
    void everyOtherColumnNextToTheSetsOwnIsOneNoDefinitionCanTake() throws SQLException {
        MetricSet set = slot.set();
        Set<String> own = new HashSet<>(set.dimensionNames());
        own.addAll(set.measureNames());
        set.ratios().forEach(r -> own.add(r.name()));
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            List<String> columns = names(
                    c,
                    "SELECT DISTINCT a.attname FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid"
                            + " WHERE r.relnamespace = '" + schema + "'::regnamespace AND r.relname LIKE"
                            + " 'campaign\\_slot\\_\\_%' AND r.relkind IN ('r', 'p', 'v', 'c') AND a.attnum > 0"
                            + " AND EXISTS (SELECT 1 FROM pg_attribute d WHERE d.attrelid = r.oid"
                            + " AND d.attname = 'slot_id')");
            assertThat(columns).contains("slot_id", "units", "units_per_mille", "stream_units", "attributed_clicks");
            assertThat(columns)
                    .filteredOn(name -> !own.contains(name))
                    .allSatisfy(name -> assertThat(Identifiers.RESERVED_COLUMNS.contains(name)
                                    || name.startsWith("stream_")
                                    || name.startsWith("batch_"))
                            .as(name)
                            .isTrue());
        }
    }

    @Test
    void theStreamWritesItsTableTheTriggerLogsTheWindowAndNothingElseIsItsToWrite() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.STREAM);
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + slot.streamWindowMetrics() + " (window_start, window_end, campaign_id, slot_id,"
                    + " impressions, clicks, units, events, revision) VALUES"
                    + " ('2026-11-28T08:00Z', '2026-11-28T08:01Z', 'c1', 'top', 2, 1, " + HUGE + ", 3, 1)");
            // A writer that logs its windows itself says so; its rows are not logged again.
            c.setAutoCommit(false);
            s.execute("SET LOCAL recount.window_writes_logged = on");
            s.execute("INSERT INTO " + slot.streamWindowMetrics() + " (window_start, window_end, campaign_id, slot_id,"
                    + " impressions, clicks, units, events, revision) VALUES"
                    + " ('2026-11-28T08:01Z', '2026-11-28T08:02Z', 'c1', 'top', 1, 0, 0, 1, 1)");
            s.execute("INSERT INTO " + slot.windowWrites()
                    + " (side, window_start) VALUES ('stream', '2026-11-28T08:01Z')");
            c.commit();
            c.setAutoCommit(true);
            assertRefused(s, "SELECT * FROM " + slot.windowWrites(), slot.windowWrites());
            assertRefused(
                    s,
                    "INSERT INTO " + slot.batchWindowMetrics() + " (window_start, window_end, campaign_id, slot_id,"
                            + " impressions, clicks, units, events, run_id) VALUES"
                            + " ('2026-11-28T08:00Z', '2026-11-28T08:01Z', 'c1', 'top', 0, 0, 0, 1, 1)",
                    slot.batchWindowMetrics());
            assertRefused(s, "SELECT * FROM " + slot.windowMetrics(), slot.windowMetrics());
        }
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(SetSchemaDriftITCase.rows(
                            c,
                            "SELECT side, window_start FROM " + slot.windowWrites()
                                    + " WHERE side = 'stream' AND window_start < '2026-11-28T09:00Z'"))
                    .isEqualTo("(stream,\"2026-11-28 08:00:00+00\")\n(stream,\"2026-11-28 08:01:00+00\")");
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT units FROM " + slot.streamWindowMetrics()
                                    + " WHERE window_start = '2026-11-28T08:00Z'"))
                    .isEqualTo(HUGE);
        }
    }

    @Test
    void theBatchWritesItsTablesAndReadsOnlyTheStreamsWindowBounds() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.BATCH);
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + slot.batchWindowMetricsStaging() + " (run_id, window_start, window_end,"
                    + " campaign_id, slot_id, impressions, clicks, units, events) VALUES"
                    + " (5, '2026-11-28T07:00Z', '2026-11-28T07:01Z', 'c1', 'top', 1, 0, 0, 1)");
            s.execute("INSERT INTO " + slot.batchWindowMetrics() + " (window_start, window_end, campaign_id, slot_id,"
                    + " impressions, clicks, units, events, run_id) SELECT window_start, window_end, campaign_id,"
                    + " slot_id, impressions, clicks, units, events, run_id FROM " + slot.batchWindowMetricsStaging());
            s.execute("DELETE FROM " + slot.batchWindowMetricsStaging());
            s.executeQuery("SELECT DISTINCT window_end - window_start FROM " + slot.streamWindowMetrics())
                    .close();
            assertRefused(s, "SELECT units FROM " + slot.streamWindowMetrics(), slot.streamWindowMetrics());
            assertRefused(s, "SELECT * FROM " + slot.windowCorrections(), slot.windowCorrections());
        }
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.count(
                            c,
                            "SELECT count(*) FROM " + slot.windowWrites()
                                    + " WHERE side = 'batch' AND window_start = '2026-11-28T07:00Z'"))
                    .isEqualTo(1);
        }
    }

    /**
     * As a first reconciliation does: a partition created holding the batch rows, indexed, attached; then a correction
     * logged. The rollups are final only where a run of this set reconciled (V26: and the default's ranges do not count
     * it).
     */
    @Test
    void theReconcilerFinalizesBatchRowsAndFinanceReadsTheViewAndRollups() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.BATCH);
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + slot.batchWindowMetrics() + " (window_start, window_end, campaign_id, slot_id,"
                    + " impressions, clicks, units, events, run_id) VALUES"
                    + " ('2026-11-29T10:00Z', '2026-11-29T10:01Z', 'c1', 'top', 4, 1, " + HUGE + ", 6, 9),"
                    + " ('2026-11-29T10:01Z', '2026-11-29T10:02Z', 'c1', 'side', 0, 0, 5, 1, 9)");
        }
        try (Connection c = stack.loginConnection(schema, Role.RECONCILER);
                Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            long run = MigratedSchemas.count(
                    c,
                    "INSERT INTO reconciliation_runs (range_from, range_to, status, metric_sets) VALUES"
                            + " ('2026-11-29T10:00Z', '2026-11-29T11:00Z', 'succeeded', '{campaign_slot}')"
                            + " RETURNING run_id");
            String partition = MigratedSchemas.text(
                    c,
                    "SELECT " + slot.windowCorrectionsNewPartitionOfBatch() + "('2026-11-29T00:00Z',"
                            + " '2026-11-30T00:00Z', " + run + ", '2026-11-29T10:00Z', '2026-11-29T11:00Z', NULL)");
            assertThat(partition).isEqualTo("campaign_slot__wc_20261129t0000_20261130t0000");
            s.execute("SELECT " + slot.windowCorrectionsIndexPartition() + "('" + partition + "')");
            s.execute("SELECT " + slot.windowCorrectionsAttachPartition() + "('" + partition + "')");
            s.execute("INSERT INTO " + slot.correctionLog() + " (reconciliation_run_id, window_start, campaign_id,"
                    + " slot_id, metric, before_value, after_value, reason) VALUES (" + run
                    + ", '2026-11-29T10:00Z', 'c1', 'top', 'units', NULL, " + HUGE + ", 'batch wins')");
            s.execute("DELETE FROM " + slot.windowWrites() + " WHERE window_start >= '2026-11-29T10:00Z'");
            c.commit();
            c.setAutoCommit(true);
            assertRefused(s, "UPDATE " + slot.correctionLog() + " SET reason = 'x'", slot.correctionLog());
            assertRefused(
                    s,
                    "SELECT * FROM " + slot.streamAttributionMetrics() + " FOR UPDATE",
                    slot.streamAttributionMetrics());
        }
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement s = c.createStatement()) {
            // Not even the owner may change the audit trail.
            assertThatThrownBy(() -> s.execute("DELETE FROM " + slot.correctionLog()))
                    .hasMessageContaining(slot.correctionLog() + " is append-only: DELETE is not allowed");
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM " + slot.windowCorrectionsWrites()))
                    .as("the partition's rows, counted once")
                    .isEqualTo(1);
            assertThat(MigratedSchemas.text(c, "SELECT reconciled_ranges()::text"))
                    .as("the default set's ranges do not count a run of another set")
                    .isEqualTo("{}");
        }
        try (Connection c = stack.loginConnection(schema, Role.FINANCE)) {
            assertThat(SetSchemaDriftITCase.rows(
                            c,
                            "SELECT slot_id, units, ctr, units_per_mille, source, is_final FROM " + slot.windowMetrics()
                                    + " WHERE window_start >= '2026-11-29T10:00Z'"))
                    .isEqualTo("(side,5,,,batch,t)\n(top," + HUGE
                            + ",0.250000000000,6917529027641081856000.000000000000,batch,t)");
            assertThat(SetSchemaDriftITCase.rows(
                            c,
                            "SELECT campaign_id, units, windows, is_final FROM " + slot.hourlyMetrics()
                                    + "('2026-11-29T10:00Z', '2026-11-29T11:00Z')"))
                    .as("one hour of each slot of campaign c1, final")
                    .isEqualTo("(c1," + HUGE + ",1,t)\n(c1,5,1,t)");
            assertThat(MigratedSchemas.text(c, "SELECT " + slot.reconciledRanges() + "()::text"))
                    .isEqualTo("{[\"2026-11-29 10:00:00+00\",\"2026-11-29 11:00:00+00\")}");
            assertThat(MigratedSchemas.count(
                            c,
                            "SELECT count(*) FROM " + slot.slidingMetrics()
                                    + "(5, '2026-11-29T10:00Z', '2026-11-29T10:10Z')"))
                    .isPositive();
            c.createStatement()
                    .executeQuery("SELECT * FROM " + slot.recentSlidingMetrics())
                    .close();
            Statement s = c.createStatement();
            assertRefused(s, "SELECT * FROM " + slot.streamWindowMetrics(), slot.streamWindowMetrics());
            assertRefused(s, "DELETE FROM " + slot.reconciliationDiffs(), slot.reconciliationDiffs());
        }
        // A later migrate (nothing changed) leaves the attached partition and what it serves as they are.
        assertThat(Migrations.apply(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword(), schema, sets)
                        .sets()
                        .summary())
                .isEqualTo("unchanged default; unchanged campaign_slot");
        try (Connection c = stack.loginConnection(schema, Role.FINANCE)) {
            assertThat(MigratedSchemas.count(
                            c,
                            "SELECT count(*) FROM " + slot.windowMetrics()
                                    + " WHERE is_final AND window_start >= '2026-11-29T10:00Z'"))
                    .isEqualTo(2);
        }
        try (Connection c = stack.loginConnection(schema, Role.RECONCILER)) {
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT string_agg(partition_name || ' ' || attached, ',') FROM "
                                    + slot.windowCorrectionsPartitions()))
                    .isEqualTo("campaign_slot__wc_20261129t0000_20261130t0000 true");
        }
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            assertThatThrownBy(() -> c.createStatement()
                            .executeQuery("SELECT * FROM " + slot.hourlyMetrics() + "(now(), now())"))
                    .hasMessageContaining("permission denied for function " + slot.hourlyMetrics());
        }
    }

    /**
     * The longest set name with the longest dimension, measure and ratio names: every object is there under its full
     * name (PostgreSQL cuts longer names to 63 bytes without a word), and the partition functions work.
     */
    @Test
    void aSetOfTheLongestNamesGetsEveryObjectUnderItsFullName() throws SQLException {
        String set = "s".repeat(Identifiers.MAX_SET_NAME - 5) + "_long";
        String dimension = "slot_" + "d".repeat(Identifiers.MAX_COLUMN_NAME - 5);
        String count = "clicks_" + "c".repeat(Identifiers.MAX_COLUMN_NAME - 7);
        String sum = "units_" + "u".repeat(Identifiers.MAX_COLUMN_NAME - 6);
        String ratio = "ratio_" + "r".repeat(Identifiers.MAX_COLUMN_NAME - 6);
        assertThat(List.of(dimension, count, sum, ratio))
                .allSatisfy(n -> assertThat(n).hasSize(Identifiers.MAX_COLUMN_NAME));
        assertThat(set).hasSize(Identifiers.MAX_SET_NAME);
        MetricSets longSets = MetricSets.parse(
                """
                version: 1
                attributes:
                  %2$s: {type: string, default: none}
                  quantity: {type: integer, default: 0}
                sets:
                  - name: default
                  - name: %1$s
                    dimensions: [%2$s, campaign_id]
                    measures:
                      - {name: %3$s, kind: count, where: {event_type: click}}
                      - {name: %4$s, kind: sum, field: quantity}
                    ratios:
                      - {name: %5$s, numerator: %3$s, denominator: events, per: 1000}
                    attribution: true
                """.formatted(set, dimension, count, sum, ratio), "long.yaml", RecountConfig.defaults());
        MetricSet longest = longSets.set(set).orElseThrow();
        SetTables t = new SetTables(longest);
        String longSchema = stack.createMigratedSchema("longest", longSets);
        try (Connection c = MigratedSchemas.admin(stack, longSchema);
                Statement s = c.createStatement()) {
            // Every table, view, type and function of the default set, by its full name (a cut name maps to no
            // default name).
            assertThat(CatalogShape.of(c, longSchema, t).keySet())
                    .containsExactlyInAnyOrderElementsOf(
                            CatalogShape.of(c, longSchema, defaults).keySet());

            List<String> named = new ArrayList<>();
            for (String table : List.of(t.streamWindowMetrics(), t.batchWindowMetrics(), t.windowCorrections())) {
                named.add(t.firstDimensionIndex(table));
            }
            named.addAll(List.of(
                    t.streamWindowMetrics() + "_window_end",
                    t.batchWindowMetricsStaging() + "_run",
                    t.batchWindowMetricsStaging() + "_key",
                    t.correctionLog() + "_key",
                    t.correctionLogSequence(),
                    t.windowWrites() + "_window",
                    t.streamAttributionMetrics() + "_window_end",
                    t.batchAttributionMetricsStaging() + "_run"));
            Set<String> relations = new HashSet<>(
                    names(c, "SELECT relname FROM pg_class WHERE relnamespace = '" + longSchema + "'::regnamespace"));
            assertThat(relations).containsAll(named);
            assertThat(named).allSatisfy(n -> assertThat(n.length()).isLessThanOrEqualTo(63));

            assertThat(names(
                            c,
                            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM"
                                    + " pg_class WHERE relnamespace = '" + longSchema
                                    + "'::regnamespace AND relname LIKE '"
                                    + set + "%')"))
                    .containsExactlyInAnyOrder(
                            t.streamWindowMetrics() + "_written",
                            t.streamWindowMetrics() + "_truncated",
                            t.batchWindowMetrics() + "_written",
                            t.batchWindowMetrics() + "_truncated",
                            t.correctionLog() + "_no_update_delete",
                            t.correctionLog() + "_no_truncate",
                            t.windowCorrectionsWritten(),
                            t.windowCorrectionsWritten());

            assertThat(names(
                            c,
                            "SELECT attname FROM pg_attribute WHERE attrelid = '" + longSchema + "."
                                    + t.reconciliationDiffs() + "'::regclass AND attnum > 0"))
                    .contains(dimension, "stream_" + count, "batch_" + count, "stream_" + sum, "batch_" + sum);
            assertThat(names(
                            c,
                            "SELECT attname FROM pg_attribute WHERE attrelid = '" + longSchema + "."
                                    + t.reconciledWindows() + "'::regclass AND attnum > 0"))
                    .contains("batch_" + count, "batch_" + sum);
            assertThat(names(
                            c,
                            "SELECT attname FROM pg_attribute WHERE attrelid = '" + longSchema + "." + t.windowMetrics()
                                    + "'::regclass AND attnum > 0"))
                    .contains(ratio, count, sum, dimension);

            // The partition of a first run: its name, key, index and range check at (nearly) 63 bytes.
            s.execute("INSERT INTO " + t.batchWindowMetrics() + " (window_start, window_end, " + dimension
                    + ", campaign_id, " + count + ", " + sum + ", events, run_id) VALUES"
                    + " ('2026-11-28T10:00Z', '2026-11-28T10:01Z', 'top', 'c1', 1, 2, 3, 4)");
            s.execute("INSERT INTO reconciliation_runs (range_from, range_to, status, metric_sets) VALUES"
                    + " ('2026-11-28T00:00Z', '2026-11-29T00:00Z', 'succeeded', '{" + set + "}')");
            String partition = MigratedSchemas.text(
                    c,
                    "SELECT " + t.windowCorrectionsNewPartitionOfBatch() + "('2026-11-28T00:00Z',"
                            + " '2026-11-29T00:00Z', 1, '2026-11-28T00:00Z', '2026-11-29T00:00Z', NULL)");
            s.execute("SELECT " + t.windowCorrectionsIndexPartition() + "('" + partition + "')");
            s.execute("SELECT " + t.windowCorrectionsAttachPartition() + "('" + partition + "')");
            assertThat(names(
                            c,
                            "SELECT relname FROM pg_class WHERE relnamespace = '" + longSchema
                                    + "'::regnamespace AND relname LIKE '" + partition + "%'"))
                    .containsExactlyInAnyOrder(partition, partition + "_pkey", t.firstDimensionIndex(partition));
            assertThat(t.firstDimensionIndex(partition)).hasSize(63);
            assertThat(names(
                            c,
                            "SELECT conname FROM pg_constraint WHERE conrelid = '" + longSchema + "." + partition
                                    + "'::regclass AND contype IN ('p', 'c') AND conname LIKE '" + partition + "%'"))
                    .containsExactlyInAnyOrder(partition + "_pkey", partition + "_bounds");
            assertThat(SetSchemaDriftITCase.rows(c, "SELECT " + ratio + ", is_final FROM " + t.windowMetrics()))
                    .isEqualTo("(333.333333333333,t)");
        }
    }

    private static List<String> names(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement();
                var rs = s.executeQuery(sql)) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }

    private static void assertRefused(Statement s, String sql, String object) {
        assertThatThrownBy(() -> s.execute(sql))
                .as(sql)
                .isInstanceOfSatisfying(
                        SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"))
                .hasMessageContaining(object);
    }
}
