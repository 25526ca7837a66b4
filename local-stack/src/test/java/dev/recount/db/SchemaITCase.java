package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowMetricsView;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Migrations, least-privilege roles, and the table classes' guarantees on a real PostgreSQL. Each role's statements
 * run on its own login's connection (see ScopedRolesITCase for what those logins may not do).
 *
 * <p>Tests module db, but lives in deploy: it needs the local stack, which deploy builds, and deploy is built after
 * db (it depends on db's migrations).
 */
class SchemaITCase {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);
    private static final BatchWindowMetricsTable BATCH_TABLE = new BatchWindowMetricsTable(DefaultSet.TABLES);
    private static final WindowMetricsView SERVING_VIEW = new WindowMetricsView(DefaultSet.TABLES);

    static final long W0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final long MINUTE = 60_000;

    static LocalStack stack;
    String schema;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    @BeforeEach
    void freshSchema() {
        schema = stack.createMigratedSchema("db");
    }

    /** A connection as {@code role}'s own login of this schema, as the component gets it; null: the administrator. */
    Connection as(Role role) throws SQLException {
        if (role != null) return stack.loginConnection(schema, role);
        Connection c = stack.adminConnection();
        try (Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + schema);
        }
        return c;
    }

    static StreamWindowMetricsTable.Row streamRow(String campaign, long spend, int revision) {
        return streamRow(campaign, BigInteger.valueOf(spend), revision);
    }

    static StreamWindowMetricsTable.Row streamRow(String campaign, BigInteger spend, int revision) {
        return new StreamWindowMetricsTable.Row(
                new WindowRow(WindowKey.of(W0, campaign, "web"), W0 + MINUTE, DefaultSet.values(1, 0, 0, spend, 1)),
                revision);
    }

    @Test
    void migrationsApplyOnAnEmptySchemaAndAreIdempotent() throws SQLException {
        MigrateResult again = Migrations.apply(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword(), schema);

        assertThat(again.migrationsExecuted).isZero();
        try (Connection c = as(null);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM flyway_schema_history WHERE success")) {
            rs.next();
            assertThat(rs.getInt(1)).isGreaterThanOrEqualTo(6);
        }
    }

    @Test
    void financeCanReadResultsButWriteNothing() throws SQLException {
        try (Connection c = as(Role.FINANCE);
                Statement s = c.createStatement()) {
            s.executeQuery("SELECT count(*) FROM window_metrics").close();
            s.executeQuery("SELECT count(*) FROM reconciliation_runs").close();
            for (String write : List.of(
                    "INSERT INTO stream_window_metrics VALUES (now(), now() + interval '1 minute', 'c', 'w', 0,0,0,0,0, 1, now())",
                    "DELETE FROM batch_window_metrics",
                    "UPDATE window_corrections SET events = 0",
                    "INSERT INTO correction_log (reconciliation_run_id, window_start, campaign_id, channel_id, metric, reason) VALUES (1, now(), 'c', 'w', 'events', 'x')")) {
                assertThatThrownBy(() -> s.execute(write))
                        .as(write)
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("permission denied");
            }
        }
    }

    @Test
    void streamRoleWritesOnlyItsOwnTables() throws SQLException {
        try (Connection c = as(Role.STREAM)) {
            STREAM_TABLE.upsert(c, List.of(streamRow("c1", 100, 1)));
            try (Statement s = c.createStatement()) {
                for (String other : List.of(
                        "SELECT * FROM batch_window_metrics",
                        "SELECT * FROM reconciliation_runs",
                        "INSERT INTO batch_runs (mode, status) VALUES ('range', 'running')",
                        "DELETE FROM stream_window_metrics")) {
                    assertThatThrownBy(() -> s.execute(other)).as(other).hasMessageContaining("permission denied");
                }
            }
        }
    }

    @Test
    void nobodyCanUpdateOrDeleteTheCorrectionLogNotEvenTheOwner() throws SQLException {
        try (Connection admin = as(null);
                Statement s = admin.createStatement()) {
            s.execute(
                    "INSERT INTO reconciliation_runs (range_from, range_to, status) VALUES (now(), now() + interval '1 hour', 'running')");
            s.execute(
                    "INSERT INTO correction_log (reconciliation_run_id, window_start, campaign_id, channel_id, metric,"
                            + " before_value, after_value, reason) SELECT max(run_id), now(), 'c', 'w', 'events', 1, 2, 'test' FROM reconciliation_runs");
            assertThatThrownBy(() -> s.execute("UPDATE correction_log SET after_value = 3"))
                    .hasMessageContaining("correction_log is append-only: UPDATE");
            assertThatThrownBy(() -> s.execute("DELETE FROM correction_log"))
                    .hasMessageContaining("correction_log is append-only: DELETE");
            assertThatThrownBy(() -> s.execute("TRUNCATE correction_log"))
                    .hasMessageContaining("correction_log is append-only: TRUNCATE");
        }
        try (Connection c = as(Role.RECONCILER);
                Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.execute("DELETE FROM correction_log")).hasMessageContaining("permission denied");
        }
    }

    @Test
    void aReplayedOlderRevisionNeverOverwritesANewerOne() throws SQLException {
        try (Connection c = as(Role.STREAM)) {
            STREAM_TABLE.upsert(c, List.of(streamRow("c1", 100, 2)));
            STREAM_TABLE.upsert(c, List.of(streamRow("c1", 50, 1)));
            assertThat(STREAM_TABLE.readRange(c, W0, W0 + MINUTE))
                    .extracting(r -> r.window().values().get(DefaultSet.SPEND), StreamWindowMetricsTable.Row::revision)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(BigInteger.valueOf(100), 2));

            STREAM_TABLE.upsert(c, List.of(streamRow("c1", 130, 3)));
            assertThat(STREAM_TABLE
                            .readRange(c, W0, W0 + MINUTE)
                            .get(0)
                            .window()
                            .values()
                            .get(DefaultSet.SPEND))
                    .isEqualTo(BigInteger.valueOf(130));
        }
    }

    @Test
    void batchReplaceRemovesVanishedKeysAndKeepsTheOldResultUntilCommit() throws SQLException {
        BatchWindowMetricsTable.Range range = new BatchWindowMetricsTable.Range(W0, W0 + 2 * MINUTE);
        try (Connection c = as(Role.BATCH)) {
            replace(c, range, List.of(batchRow("c1", 10), batchRow("c2", 20)));
            replace(c, range, List.of(batchRow("c1", 11)));
            assertThat(BATCH_TABLE.readRange(c, W0, W0 + 2 * MINUTE))
                    .extracting(r -> r.key().dimension(0) + "=" + r.values().get(DefaultSet.SPEND))
                    .containsExactly("c1=11");

            c.setAutoCommit(false);
            long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, range.fromMillis(), range.toMillis(), false);
            BATCH_TABLE.insertStaging(c, run, List.of(batchRow("c9", 99)));
            BATCH_TABLE.replaceFromStaging(c, range, run);
            c.rollback(); // a crash before commit
            c.setAutoCommit(true);
            assertThat(BATCH_TABLE.readRange(c, W0, W0 + 2 * MINUTE))
                    .extracting(r -> r.key().dimension(0))
                    .containsExactly("c1");
        }
    }

    @Test
    void batchReplaceLeavesARowItComputesAsItStandsToTheRunThatLastChangedIt() throws SQLException {
        BatchWindowMetricsTable.Range range = new BatchWindowMetricsTable.Range(W0, W0 + 2 * MINUTE);
        try (Connection c = as(Role.BATCH)) {
            assertThat(replace(c, range, List.of(batchRow("c1", 10), batchRow("c2", 20))))
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(2, 0, 0));
            List<String> first = batchRowOwners(c);

            assertThat(replace(c, range, List.of(batchRow("c1", 10), batchRow("c2", 20))))
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(0, 2, 0));
            assertThat(batchRowOwners(c)).as("run ids and computed_at kept").isEqualTo(first);

            // A metric or the window end alone differing is a change.
            WindowRow longerC2 = new WindowRow(
                    WindowKey.of(W0, "c2", "web"),
                    W0 + 2 * MINUTE,
                    batchRow("c2", 20).values());
            assertThat(replace(c, range, List.of(batchRow("c1", 11), longerC2)))
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(2, 0, 0));
            List<String> changed = batchRowOwners(c);
            assertThat(changed.get(0)).isNotEqualTo(first.get(0));
            assertThat(changed.get(1)).isNotEqualTo(first.get(1));
            assertThat(replace(c, range, List.of(batchRow("c1", 11))))
                    .isEqualTo(new BatchWindowMetricsTable.ReplaceResult(0, 1, 1));
            assertThat(batchRowOwners(c)).containsExactly(changed.get(0));
        }
    }

    @Test
    void servingViewPrefersCorrectionsThenStreamAndShowsBatchOnlyKeys() throws SQLException {
        try (Connection c = as(Role.STREAM)) {
            STREAM_TABLE.upsert(c, List.of(streamRow("both", 100, 1), streamRow("corrected", 5, 1)));
        }
        try (Connection c = as(Role.BATCH)) {
            replace(
                    c,
                    new BatchWindowMetricsTable.Range(W0, W0 + MINUTE),
                    List.of(batchRow("both", 101), batchRow("batch-only", 7), batchRow("corrected", 6)));
        }
        try (Connection admin = as(null);
                Statement s = admin.createStatement()) {
            s.execute(
                    "INSERT INTO reconciliation_runs (range_from, range_to, status) VALUES (now(), now() + interval '1 hour', 'succeeded')");
            s.execute(
                    "INSERT INTO window_corrections (window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                            + " conversions, spend_micros, events, reconciliation_run_id) SELECT window_start, window_end, campaign_id,"
                            + " channel_id, impressions, clicks, conversions, spend_micros, events, (SELECT max(run_id) FROM reconciliation_runs)"
                            + " FROM batch_window_metrics WHERE campaign_id = 'corrected'");
        }
        try (Connection c = as(Role.STREAM)) {
            STREAM_TABLE.upsert(c, List.of(streamRow("corrected", 500, 2))); // a later re-firing
        }
        try (Connection c = as(Role.FINANCE);
                PreparedStatement ps = c.prepareStatement(
                        "SELECT campaign_id, spend_micros, source, is_final FROM window_metrics ORDER BY campaign_id");
                ResultSet rs = ps.executeQuery()) {
            StringBuilder rows = new StringBuilder();
            while (rs.next()) {
                rows.append(rs.getString(1))
                        .append(':')
                        .append(rs.getLong(2))
                        .append(':')
                        .append(rs.getString(3))
                        .append(':')
                        .append(rs.getBoolean(4))
                        .append(' ');
            }
            assertThat(rows.toString().trim())
                    .isEqualTo("batch-only:7:batch:false both:100:stream:false corrected:6:batch:true");
        }
    }

    @Test
    void spendBeyondALongIsStoredAndServedExactly() throws SQLException {
        BigInteger streamSpend = BigInteger.TWO.pow(64).add(BigInteger.valueOf(7)); // > 2^63: no bigint holds it
        BigInteger batchSpend = BigInteger.TEN.pow(37).add(BigInteger.valueOf(3));
        try (Connection c = as(Role.STREAM)) {
            STREAM_TABLE.upsert(c, List.of(streamRow("stream-big", streamSpend, 1)));
            assertThat(STREAM_TABLE
                            .readRange(c, W0, W0 + MINUTE)
                            .get(0)
                            .window()
                            .values()
                            .get(DefaultSet.SPEND))
                    .isEqualTo(streamSpend);
        }
        try (Connection c = as(Role.BATCH)) {
            replace(c, new BatchWindowMetricsTable.Range(W0, W0 + MINUTE), List.of(batchRow("batch-big", batchSpend)));
            assertThat(BATCH_TABLE.readRange(c, W0, W0 + MINUTE).get(0).values().get(DefaultSet.SPEND))
                    .isEqualTo(batchSpend);
        }
        for (Role reader : List.of(Role.FINANCE, Role.RECONCILER)) {
            try (Connection c = as(reader)) {
                assertThat(SERVING_VIEW.readRange(c, W0, W0 + MINUTE))
                        .extracting(
                                r -> r.window().key().dimension(0),
                                r -> r.window().values().get(DefaultSet.SPEND),
                                WindowMetricsView.Row::source)
                        .as("read as %s", reader)
                        .containsExactly(
                                org.assertj.core.groups.Tuple.tuple(
                                        "batch-big", batchSpend, WindowMetricsView.Source.BATCH),
                                org.assertj.core.groups.Tuple.tuple(
                                        "stream-big", streamSpend, WindowMetricsView.Source.STREAM));
                assertThat(SERVING_VIEW.totals(c, W0, W0 + MINUTE))
                        .isEqualTo(DefaultSet.values(2, 0, 0, streamSpend.add(batchSpend), 2));
            }
        }
    }

    /**
     * The schema's foreign keys, all of them: the rows a day's batch or reconciliation writes by the million
     * (batch_window_metrics, batch_attribution_metrics since V22; window_corrections since V11;
     * reconciliation_diffs since V18) check none row by row; only per-run rows keep theirs. And the batch tables have
     * no index on run_id (V22), which every row of a replace paid for.
     */
    @Test
    void onlyPerRunRowsCarryForeignKeysAndTheBatchTablesNoRunIndex() throws SQLException {
        List<String> foreignKeys = new java.util.ArrayList<>();
        List<String> batchIndexes = new java.util.ArrayList<>();
        try (Connection c = as(null);
                PreparedStatement fk = c.prepareStatement("SELECT conrelid::regclass::text || ' -> '"
                        + " || confrelid::regclass::text FROM pg_constraint c JOIN pg_namespace n ON n.oid ="
                        + " c.connamespace WHERE n.nspname = ? AND contype = 'f' ORDER BY 1");
                PreparedStatement ix = c.prepareStatement("SELECT tablename || '(' || regexp_replace(indexdef,"
                        + " '.*\\((.*)\\)$', '\\1') || ')' FROM pg_indexes WHERE schemaname = ?"
                        + " AND tablename IN ('batch_window_metrics', 'batch_attribution_metrics') ORDER BY 1")) {
            fk.setString(1, schema);
            try (ResultSet rs = fk.executeQuery()) {
                while (rs.next()) foreignKeys.add(rs.getString(1).replace(schema + ".", ""));
            }
            ix.setString(1, schema);
            try (ResultSet rs = ix.executeQuery()) {
                while (rs.next()) batchIndexes.add(rs.getString(1));
            }
        }
        assertThat(foreignKeys)
                .containsExactly(
                        "attribution_diffs -> reconciliation_runs",
                        "correction_log -> reconciliation_runs",
                        "reconciled_windows -> reconciliation_runs",
                        "reconciliation_runs -> batch_runs");
        assertThat(batchIndexes)
                .containsExactlyInAnyOrder(
                        "batch_attribution_metrics(window_start, campaign_id, channel_id)",
                        "batch_window_metrics(campaign_id, window_start)",
                        "batch_window_metrics(window_start, campaign_id, channel_id)");
    }

    @Test
    void everySpendColumnIsNumeric38AndStaysNonNegative() throws SQLException {
        try (Connection c = as(null);
                PreparedStatement ps = c.prepareStatement(
                        "SELECT table_name || '.' || column_name, data_type, numeric_precision, numeric_scale"
                                + " FROM information_schema.columns WHERE table_schema = ? AND (column_name LIKE '%spend_micros'"
                                + " OR column_name IN ('before_value', 'after_value')) ORDER BY 1")) {
            ps.setString(1, schema);
            List<String> columns = new java.util.ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    columns.add(
                            rs.getString(1) + " " + rs.getString(2) + "(" + rs.getInt(3) + "," + rs.getInt(4) + ")");
                }
            }
            assertThat(columns)
                    .containsExactlyInAnyOrder(
                            "attribution_corrections.attributed_spend_micros numeric(38,0)",
                            "attribution_diffs.batch_attributed_spend_micros numeric(38,0)",
                            "attribution_diffs.stream_attributed_spend_micros numeric(38,0)",
                            "attribution_metrics.attributed_spend_micros numeric(38,0)",
                            "batch_attribution_metrics.attributed_spend_micros numeric(38,0)",
                            "batch_attribution_metrics_staging.attributed_spend_micros numeric(38,0)",
                            "stream_attribution_metrics.attributed_spend_micros numeric(38,0)",
                            "batch_window_metrics.spend_micros numeric(38,0)",
                            "batch_window_metrics_staging.spend_micros numeric(38,0)",
                            "correction_log.after_value numeric(38,0)",
                            "correction_log.before_value numeric(38,0)",
                            // V12: a sum over many windows, unbounded on purpose (an exact integer that may exceed 38
                            // digits).
                            "recent_sliding_metrics.spend_micros numeric(0,0)",
                            // V21: the batch's sum of a recorded window, as the reconciler read it.
                            "reconciled_windows.batch_spend_micros numeric(38,0)",
                            "reconciliation_diffs.batch_spend_micros numeric(38,0)",
                            "reconciliation_diffs.stream_spend_micros numeric(38,0)",
                            "stream_window_metrics.spend_micros numeric(38,0)",
                            "window_corrections.spend_micros numeric(38,0)",
                            // V19: window_corrections' partition for keys of ranges no first run filled.
                            "window_corrections_default.spend_micros numeric(38,0)",
                            "window_metrics.spend_micros numeric(38,0)");
        }
        try (Connection c = as(Role.STREAM)) {
            assertThatThrownBy(() -> STREAM_TABLE.upsert(c, List.of(streamRow("negative", BigInteger.valueOf(-1), 1))))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("spend_micros");
            // Beyond 38 digits is an error, never a rounded or wrapped value.
            assertThatThrownBy(() -> STREAM_TABLE.upsert(c, List.of(streamRow("huge", BigInteger.TEN.pow(38), 1))))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("numeric field overflow");
        }
    }

    static WindowRow batchRow(String campaign, long spend) {
        return batchRow(campaign, BigInteger.valueOf(spend));
    }

    static WindowRow batchRow(String campaign, BigInteger spend) {
        return new WindowRow(WindowKey.of(W0, campaign, "web"), W0 + MINUTE, DefaultSet.values(1, 0, 0, spend, 1));
    }

    static BatchWindowMetricsTable.ReplaceResult replace(
            Connection c, BatchWindowMetricsTable.Scope scope, List<WindowRow> rows) throws SQLException {
        long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, W0, W0 + 2 * MINUTE, false);
        c.setAutoCommit(false);
        BATCH_TABLE.insertStaging(c, run, rows);
        BatchWindowMetricsTable.ReplaceResult r = BATCH_TABLE.replaceFromStaging(c, scope, run);
        BatchRunsTable.succeed(c, run, rows.size(), r.written(), r.deleted(), null, null, null);
        c.commit();
        c.setAutoCommit(true);
        return r;
    }

    /** Each batch row's campaign with the run that last changed it and when ("c1 run 3 at ..."). */
    static List<String> batchRowOwners(Connection c) throws SQLException {
        List<String> owners = new java.util.ArrayList<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT campaign_id, run_id, computed_at, window_end"
                        + " FROM batch_window_metrics ORDER BY campaign_id")) {
            while (rs.next()) {
                owners.add(rs.getString(1) + " run " + rs.getLong(2) + " at " + rs.getString(3) + " ending "
                        + rs.getString(4));
            }
        }
        return owners;
    }
}
