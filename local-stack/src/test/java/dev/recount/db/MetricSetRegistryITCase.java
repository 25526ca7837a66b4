package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.ConfigException;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.MetricSetRegistry;
import dev.recount.db.sets.MetricSetRegistry.Change;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@code migrate} does with the definitions ({@link MetricSetRegistry#apply}) and what every component checks at
 * start ({@link MetricSetRegistry#check}): a set is created once, a rerun changes nothing, a change of its dimensions
 * or measures is refused with nothing written, a removed set keeps its tables and comes back when declared again.
 */
class MetricSetRegistryITCase {
    static final String HEAD = """
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              quantity: {type: integer, default: 0}
            sets:
              - name: default
            """;

    static final String CAMPAIGN_SLOT = """
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: units, kind: sum, field: quantity}
                ratios:
                  - {name: ctr, numerator: clicks, denominator: impressions}
            """;

    static LocalStack stack;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    static MetricSets sets(String... declarations) {
        return MetricSets.parse(HEAD + String.join("", declarations), "sets.yaml", RecountConfig.defaults());
    }

    static Migrations.Applied migrate(String schema, MetricSets sets) {
        return Migrations.apply(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword(), schema, sets);
    }

    @Test
    void aNewSetIsCreatedOnceAndARerunChangesNothing() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(SetSchemaDriftITCase.rows(c, "SELECT name, removed_at FROM metric_sets"))
                    .as("the default set, recorded by the migration of the built-in definitions")
                    .isEqualTo("(default,)");
        }

        assertThat(migrate(schema, sets(CAMPAIGN_SLOT)).sets().changes())
                .isEqualTo(Map.of("default", Change.UNCHANGED, "campaign_slot", Change.CREATED));
        String recorded;
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            recorded = SetSchemaDriftITCase.rows(c, "SELECT * FROM metric_sets");
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT definition->'measures'->2->>'field' FROM metric_sets"
                                    + " WHERE name = 'campaign_slot'"))
                    .isEqualTo("quantity");
            assertThat(MigratedSchemas.text(c, "SELECT to_regclass('campaign_slot__window_metrics')::text"))
                    .isEqualTo("campaign_slot__window_metrics");
        }

        Migrations.Applied again = migrate(schema, sets(CAMPAIGN_SLOT));
        assertThat(again.sets().changes())
                .isEqualTo(Map.of("default", Change.UNCHANGED, "campaign_slot", Change.UNCHANGED));
        assertThat(again.sets().summary()).isEqualTo("unchanged default; unchanged campaign_slot");
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(SetSchemaDriftITCase.rows(c, "SELECT * FROM metric_sets"))
                    .isEqualTo(recorded);
        }
        // A component's own login may check, and finds every set ready.
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            MetricSetRegistry.check(c, sets(CAMPAIGN_SLOT));
        }
    }

    @Test
    void aChangeOfMeasuresOrDimensionsInPlaceIsRefusedWithNothingWritten() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        migrate(schema, sets(CAMPAIGN_SLOT));
        String recorded;
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            recorded = SetSchemaDriftITCase.rows(c, "SELECT * FROM metric_sets");
        }
        String clicksAlsoConversions = CAMPAIGN_SLOT.replace(
                "{name: clicks, kind: count, where: {event_type: click}}",
                "{name: clicks, kind: count, where: {event_type: [click, conversion]}}");
        String another = """
                  - name: another
                    dimensions: [slot_id]
                    measures:
                      - {name: clicks, kind: count, where: {event_type: click}}
                """;
        String expected = "metric set campaign_slot cannot change in place: its measures: clicks from (count where"
                + " event_type in [click]) to (count where event_type in [click, conversion]). Its tables hold rows of"
                + " the registered definition. To count the new one, declare it as a new set under another name,"
                + " remove campaign_slot from sets.yaml (its tables stay), run ./recount migrate, then ./recount"
                + " backfill range --set <new name> --from ... --to ... for its history";
        assertThatThrownBy(() -> migrate(schema, sets(another, clicksAlsoConversions)))
                .isInstanceOf(ConfigException.class)
                .hasMessage(expected);
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(SetSchemaDriftITCase.rows(c, "SELECT * FROM metric_sets"))
                    .as("nothing recorded, not even the other set")
                    .isEqualTo(recorded);
            assertThat(MigratedSchemas.text(c, "SELECT to_regclass('another__stream_window_metrics')::text"))
                    .isNull();
        }
        try (Connection c = stack.loginConnection(schema, Role.RECONCILER)) {
            assertThatThrownBy(() -> MetricSetRegistry.check(c, sets(clicksAlsoConversions)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage(expected);
        }

        String fewerDimensions = CAMPAIGN_SLOT.replace("[campaign_id, slot_id]", "[campaign_id]");
        assertThatThrownBy(() -> migrate(
                        schema,
                        sets(fewerDimensions.replace(
                                "{name: units, kind: sum, field: quantity}", "{name: units, kind: count}"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("metric set campaign_slot cannot change in place: its dimensions from"
                        + " [campaign_id, slot_id] to [campaign_id]; its measures: units from (sum of quantity) to"
                        + " (count). ");
    }

    @Test
    void ratiosAndRollupsChangeInPlace() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        migrate(schema, sets(CAMPAIGN_SLOT));
        String moreRatiosHourlyOnly = CAMPAIGN_SLOT.replace(
                        "  - {name: ctr, numerator: clicks, denominator: impressions}\n",
                        "  - {name: ctr, numerator: clicks, denominator: impressions}\n"
                                + "      - {name: units_per_mille, numerator: units, denominator: impressions,"
                                + " per: 1000}\n")
                + "    rollups: [hourly]\n";

        assertThat(migrate(schema, sets(moreRatiosHourlyOnly)).sets().changes())
                .containsEntry("campaign_slot", Change.UPDATED);
        try (Connection c = stack.loginConnection(schema, Role.FINANCE)) {
            c.createStatement()
                    .executeQuery("SELECT ctr, units_per_mille FROM campaign_slot__window_metrics")
                    .close();
            c.createStatement()
                    .executeQuery("SELECT * FROM campaign_slot__hourly_metrics(now(), now())")
                    .close();
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = '"
                                    + schema + "'::regnamespace AND proname LIKE 'campaign_slot__%metrics'"))
                    .as("no daily or sliding sums any more")
                    .isEqualTo("campaign_slot__hourly_metrics,campaign_slot__period_metrics");
            assertThat(MigratedSchemas.text(
                            c, "SELECT definition->>'rollups' FROM metric_sets WHERE name = 'campaign_slot'"))
                    .isEqualTo("[\"hourly\"]");
        }
    }

    @Test
    void aRemovedSetKeepsItsTablesAndRowsAndIsRestoredWhenDeclaredAgain() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        migrate(schema, sets(CAMPAIGN_SLOT));
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO campaign_slot__stream_window_metrics (window_start, window_end, campaign_id,"
                    + " slot_id, impressions, clicks, units, events, revision) VALUES"
                    + " ('2026-11-28T10:00Z', '2026-11-28T10:01Z', 'c1', 'top', 1, 0, 0, 1, 1)");
        }

        Migrations.Applied removed = migrate(schema, sets());
        assertThat(removed.sets().changes())
                .isEqualTo(Map.of("default", Change.UNCHANGED, "campaign_slot", Change.REMOVED));
        assertThat(removed.sets().summary()).endsWith("removed campaign_slot (its tables stay)");
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM metric_sets WHERE removed_at IS NOT NULL"))
                    .isEqualTo(1);
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM campaign_slot__window_metrics"))
                    .isEqualTo(1);
        }
        try (Connection c = stack.loginConnection(schema, Role.BATCH)) {
            assertThatThrownBy(() -> MetricSetRegistry.check(c, sets(CAMPAIGN_SLOT)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("metric set campaign_slot was removed from schema " + schema
                            + "'s definitions by ./recount migrate at ")
                    .hasMessageEndingWith(
                            " (its tables are kept): run ./recount migrate with sets.yaml to declare" + " it again");
        }
        // Removed once is enough: a second migrate without it changes nothing.
        assertThat(migrate(schema, sets()).sets().changes()).containsOnlyKeys("default");

        assertThat(migrate(schema, sets(CAMPAIGN_SLOT)).sets().changes())
                .containsEntry("campaign_slot", Change.RESTORED);
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM metric_sets WHERE removed_at IS NOT NULL"))
                    .isZero();
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM campaign_slot__window_metrics"))
                    .isEqualTo(1);
        }
        try (Connection c = stack.loginConnection(schema, Role.BATCH)) {
            MetricSetRegistry.check(c, sets(CAMPAIGN_SLOT));
        }
    }

    @Test
    void checkRefusesASetThatWasNeverMigrated() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        try (Connection c = stack.loginConnection(schema, Role.FINANCE)) {
            MetricSetRegistry.check(c, sets());
            assertThatThrownBy(() -> MetricSetRegistry.check(c, sets(CAMPAIGN_SLOT)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("metric set campaign_slot of sets.yaml has no tables in schema " + schema
                            + " yet: run ./recount migrate, which creates them");
        }
    }

    /** A registry row deleted by hand: the set's tables are taken back only if they are the definition's. */
    @Test
    void tablesOfAnotherDefinitionWithoutARowAreRefused() throws SQLException {
        String schema = stack.createMigratedSchema("registry");
        migrate(schema, sets(CAMPAIGN_SLOT));
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM metric_sets WHERE name = 'campaign_slot'");
        }
        assertThatThrownBy(() -> migrate(
                        schema,
                        sets(CAMPAIGN_SLOT.replace(
                                "{name: units, kind: sum, field: quantity}",
                                "{name: quantity_sum, kind: sum, field: quantity}"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("metric set campaign_slot is not recorded in " + schema + ".metric_sets, but its"
                        + " table campaign_slot__stream_window_metrics exists with the columns [window_start,"
                        + " window_end, campaign_id, slot_id, impressions, clicks, units, events, revision,"
                        + " updated_at]");
        assertThat(migrate(schema, sets(CAMPAIGN_SLOT)).sets().changes())
                .as("the same definition takes them back")
                .containsEntry("campaign_slot", Change.CREATED);
    }
}
