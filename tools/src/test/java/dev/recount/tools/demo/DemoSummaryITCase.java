package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.Key;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.SetTruth;
import dev.recount.testkit.LocalStack;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's metric sets on a real PostgreSQL: migrate creates every object the demo's summary reads, and the summary
 * reads a set's rows from them and checks them against a truth key by key.
 */
class DemoSummaryITCase {
    static final Path DEMO = Path.of("..", DemoWorkspace.METRIC_SETS);
    static final Instant AT = Instant.parse("2026-11-29T10:00:00Z");
    static final Instant END = AT.plus(Duration.ofMinutes(5));

    static LocalStack stack;
    static MetricSets sets;
    static Definitions oracleSets;
    static String schema;

    @BeforeAll
    static void migrateTheDemosSets() throws Exception {
        stack = LocalStack.shared();
        RecountConfig config = RecountConfig.defaults()
                .with("attribution.enabled", "true")
                .with("attribution.window", DemoWorkspace.ATTRIBUTION_WINDOW);
        String text = Files.readString(DEMO);
        sets = MetricSets.parse(text, DEMO.toString(), config);
        oracleSets = Definitions.parse(
                text,
                new OracleSettings(
                        Duration.ofMinutes(1),
                        true,
                        Duration.ofMinutes(2),
                        Duration.ofDays(7),
                        Duration.ofMinutes(5),
                        config.validation().maxCostMicros()));
        schema = stack.createMigratedSchema("demo_sets", sets);
    }

    Connection connection() throws Exception {
        Connection c = stack.adminConnection();
        try (Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + schema);
        }
        return c;
    }

    @Test
    void everyRelationTheSummaryReadsExistsForEverySet() throws Exception {
        try (Connection c = connection()) {
            for (MetricSet set : sets.sets()) {
                SetTables tables = new SetTables(set);
                List<String> served = columns(c, DemoSummary.servedName(set.name()));
                assertThat(served).as(set.name()).contains("window_start", "is_final");
                assertThat(served)
                        .as(set.name())
                        .containsAll(set.dimensionNames())
                        .containsAll(set.measureNames());
                assertThat(columns(c, tables.streamWindowMetrics()))
                        .as(set.name())
                        .contains("revision");
                if (set.attribution()) {
                    assertThat(columns(c, tables.name("attribution_metrics")))
                            .as(set.name())
                            .containsAll(set.dimensionNames())
                            .containsAll(SetTruth.ATTRIBUTION_COLUMNS);
                    assertThat(columns(c, tables.streamAttributionMetrics())).isNotEmpty();
                }
            }
        }
    }

    @Test
    void aSetsServedRowsAreCheckedAgainstItsTruthKeyByKey() throws Exception {
        MetricSet slot = sets.set("campaign_slot").orElseThrow();
        try (Connection c = connection()) {
            new StreamWindowMetricsTable(new SetTables(slot))
                    .upsert(
                            c,
                            List.of(
                                    row(slot, "cmp-0001", "home-top", 3, 1, 1500, 4, 1),
                                    row(slot, "cmp-0002", "home-side", 5, 0, 900, 5, 2)));
            SortedMap<Key, List<BigInteger>> truth = new TreeMap<>();
            truth.put(Key.of(AT.toEpochMilli(), "cmp-0001", "home-top"), values(3, 1, 1500, 4));
            truth.put(Key.of(AT.toEpochMilli(), "cmp-0002", "home-side"), values(5, 0, 900, 5));
            Definitions.MetricSet oracleSlot = oracleSets.set("campaign_slot");

            DemoSummary.SetSummary exact =
                    DemoSummary.summarize(c, slot, new SetTruth(oracleSlot, truth, null), AT, END, 0);
            assertThat(exact.check().isExact()).as(exact.check().verdict()).isTrue();
            assertThat(exact.check().keys()).isEqualTo(2);
            assertThat(exact.windows()).isEqualTo(2);
            assertThat(exact.lateRefirings()).isEqualTo(1);
            assertThat(exact.stream()).isEqualTo(values(8, 1, 2400, 9));
            assertThat(exact.served()).isEqualTo(exact.truth());
            assertThat(exact.finalEqualsTruth()).isTrue();

            truth.put(Key.of(AT.toEpochMilli(), "cmp-0002", "home-side"), values(5, 0, 901, 5));
            DemoSummary.SetSummary off =
                    DemoSummary.summarize(c, slot, new SetTruth(oracleSlot, truth, null), AT, END, 0);
            assertThat(off.finalEqualsTruth()).isFalse();
            assertThat(off.check().differences())
                    .containsExactly("2026-11-29T10:00:00Z cmp-0002/home-side: spend_micros 900 instead of 901");
        }
    }

    static StreamWindowMetricsTable.Row row(
            MetricSet set,
            String campaign,
            String slot,
            long impressions,
            long clicks,
            long spend,
            long events,
            int revision) {
        assertThat(set.measureNames()).containsExactly("impressions", "clicks", "spend_micros", "events");
        return new StreamWindowMetricsTable.Row(
                new WindowRow(
                        WindowKey.of(AT.toEpochMilli(), campaign, slot),
                        END.toEpochMilli(),
                        MeasureValues.of(impressions, clicks, spend, events)),
                revision);
    }

    static List<BigInteger> values(long... v) {
        List<BigInteger> out = new ArrayList<>();
        for (long x : v) out.add(BigInteger.valueOf(x));
        return out;
    }

    static List<String> columns(Connection c, String relation) throws Exception {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT column_name FROM information_schema.columns"
                + " WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position")) {
            ps.setString(1, schema);
            ps.setString(2, relation);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1));
            }
        }
        return out;
    }
}
