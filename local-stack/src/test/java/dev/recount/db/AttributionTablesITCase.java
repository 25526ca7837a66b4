package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** V13's attribution tables through db's table classes, as the components' own logins. */
class AttributionTablesITCase {
    private static final StreamAttributionMetricsTable STREAM_ATTRIBUTION_TABLE =
            new StreamAttributionMetricsTable(DefaultSet.TABLES);
    private static final BatchAttributionMetricsTable BATCH_ATTRIBUTION_TABLE =
            new BatchAttributionMetricsTable(DefaultSet.TABLES);

    static final long W0 = Instant.parse("2026-03-01T10:00:00Z").toEpochMilli();
    static final long MINUTE = 60_000;

    static LocalStack stack;
    String schema;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    @BeforeEach
    void freshSchema() {
        schema = stack.createMigratedSchema("attr");
    }

    static AttributionRow row(String campaign, long attributed, long unattributed, BigInteger spend) {
        return new AttributionRow(
                WindowKey.of(W0, campaign, "web"),
                W0 + MINUTE,
                new AttributionMetrics(attributed, 0, unattributed, spend));
    }

    @Test
    void theStreamUpsertTakesOnlyALaterFiringWithNoFewerClicks() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            STREAM_ATTRIBUTION_TABLE.upsert(
                    c, List.of(new StreamAttributionMetricsTable.Row(row("c1", 1, 2, BigInteger.TEN), 2)));
            List<StreamAttributionMetricsTable.Row> refused = STREAM_ATTRIBUTION_TABLE.upsert(
                    c,
                    List.of(
                            new StreamAttributionMetricsTable.Row(row("c1", 0, 1, BigInteger.ONE), 1), // older firing
                            new StreamAttributionMetricsTable.Row(row("c1", 0, 2, BigInteger.ONE), 3))); // fewer clicks
            assertThat(refused).hasSize(2);
            STREAM_ATTRIBUTION_TABLE.upsert(
                    c, List.of(new StreamAttributionMetricsTable.Row(row("c1", 3, 0, BigInteger.TWO.pow(70)), 4)));
            assertThat(STREAM_ATTRIBUTION_TABLE.readRange(c, W0, W0 + MINUTE))
                    .singleElement()
                    .satisfies(r -> {
                        assertThat(r.revision()).isEqualTo(4);
                        assertThat(r.attribution().metrics())
                                .isEqualTo(new AttributionMetrics(3, 0, 0, BigInteger.TWO.pow(70)));
                    });
            assertThatThrownBy(() -> STREAM_ATTRIBUTION_TABLE.upsert(
                            c, List.of(new StreamAttributionMetricsTable.Row(row("neg", -1, 0, BigInteger.ZERO), 1))))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("attributed_clicks");
        }
    }

    @Test
    void aBatchReplaceSwapsTheRangeInOneTransaction() throws SQLException {
        BatchWindowMetricsTable.Range range = new BatchWindowMetricsTable.Range(W0, W0 + 2 * MINUTE);
        try (Connection c = stack.loginConnection(schema, Role.BATCH)) {
            replace(c, range, List.of(row("c1", 1, 0, BigInteger.ONE), row("c2", 0, 1, BigInteger.ZERO)));
            assertThat(replace(c, range, List.of(row("c1", 1, 0, BigInteger.ONE), row("c2", 0, 1, BigInteger.ZERO))))
                    .as("rows computed as they stand are left alone")
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(0, 2, 0));
            assertThat(replace(c, range, List.of(row("c1", 2, 0, BigInteger.TWO))))
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(1, 0, 1));
            assertThat(BATCH_ATTRIBUTION_TABLE.readRange(c, W0, W0 + 2 * MINUTE))
                    .extracting(r -> r.key().dimension(0) + "=" + r.metrics().attributedClicks())
                    .containsExactly("c1=2");
            long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, W0, W0 + 2 * MINUTE, false);
            BATCH_ATTRIBUTION_TABLE.insertStaging(
                    c,
                    run,
                    List.of(new AttributionRow(
                            WindowKey.of(W0 + 5 * MINUTE, "out", "web"), W0 + 6 * MINUTE, AttributionMetrics.ZERO)));
            assertThatThrownBy(() -> BATCH_ATTRIBUTION_TABLE.replaceFromStaging(c, range, run))
                    .hasMessageContaining("outside its range");
        }
    }

    @Test
    void theServingViewPrefersCorrectionsThenStreamThenBatch() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            STREAM_ATTRIBUTION_TABLE.upsert(
                    c, List.of(new StreamAttributionMetricsTable.Row(row("both", 1, 0, BigInteger.ONE), 1)));
        }
        try (Connection c = stack.loginConnection(schema, Role.BATCH)) {
            replace(
                    c,
                    new BatchWindowMetricsTable.Range(W0, W0 + 2 * MINUTE),
                    List.of(row("both", 2, 0, BigInteger.TWO), row("batch-only", 5, 0, BigInteger.TEN)));
        }
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT campaign_id, attributed_clicks, source FROM attribution_metrics"
                        + " ORDER BY campaign_id")) {
            StringBuilder seen = new StringBuilder();
            while (rs.next())
                seen.append(rs.getString(1))
                        .append('=')
                        .append(rs.getLong(2))
                        .append(rs.getString(3))
                        .append(' ');
            assertThat(seen.toString().trim()).isEqualTo("batch-only=5batch both=1stream");
        }
    }

    static BatchWindowMetricsTable.ReplaceResult replace(
            Connection c, BatchWindowMetricsTable.Range range, List<AttributionRow> rows) throws SQLException {
        long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, range.fromMillis(), range.toMillis(), false);
        c.setAutoCommit(false);
        BATCH_ATTRIBUTION_TABLE.insertStaging(c, run, rows);
        BatchWindowMetricsTable.ReplaceResult r = BATCH_ATTRIBUTION_TABLE.replaceFromStaging(c, range, run);
        BatchRunsTable.succeed(c, run, rows.size(), r.written(), r.deleted(), null, null, null);
        c.commit();
        c.setAutoCommit(true);
        return r;
    }
}
