package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * V21's {@code window_writes}: every committed write to the stream's or the batch's table names its windows there —
 * the stream's committer and the batch's replace once per window and transaction, as their own logins, and any other
 * write row by row through the tables' triggers — so that a rerun can trust a window nothing names.
 */
class WindowWritesITCase {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);
    private static final BatchWindowMetricsTable BATCH_TABLE = new BatchWindowMetricsTable(DefaultSet.TABLES);

    static final long W0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final long MINUTE = 60_000;

    /** The log as "side window_start" lines, in order, one per row. */
    static final String LOG = "SELECT coalesce(string_agg(side || ' ' || to_char(window_start AT TIME ZONE 'UTC',"
            + " 'HH24:MI'), ',' ORDER BY side, window_start), '') FROM window_writes";

    static LocalStack stack;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    static StreamWindowMetricsTable.Row streamRow(long window, String campaign, int revision) {
        return new StreamWindowMetricsTable.Row(
                new WindowRow(
                        WindowKey.of(window, campaign, "web"),
                        window + MINUTE,
                        DefaultSet.values(revision, 0, 0, BigInteger.TEN, revision)),
                revision);
    }

    static WindowRow batchRow(long window, String campaign) {
        return new WindowRow(
                WindowKey.of(window, campaign, "web"), window + MINUTE, DefaultSet.values(1, 0, 0, BigInteger.ONE, 1));
    }

    @Test
    void theStreamsCommitterLogsEachWindowOnceAndItsRowsNotAgain() throws Exception {
        String schema = stack.createMigratedSchema("wwstream");
        try (Connection c = stack.loginConnection(schema, Role.STREAM)) {
            c.setAutoCommit(false);
            STREAM_TABLE.upsert(
                    c, List.of(streamRow(W0, "a", 1), streamRow(W0, "b", 1), streamRow(W0 + MINUTE, "a", 1)));
            c.commit();
            // A re-firing of one key: its window once more, as a transaction of its own.
            STREAM_TABLE.upsert(c, List.of(streamRow(W0, "a", 2)));
            c.commit();
        }
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("stream 10:00,stream 10:00,stream 10:01");
        }
    }

    @Test
    void theBatchsReplaceLogsTheWindowsItChangedAndTheWindowsItEmptied() throws Exception {
        String schema = stack.createMigratedSchema("wwbatch");
        try (Connection c = stack.loginConnection(schema, Role.BATCH)) {
            replace(c, List.of(batchRow(W0, "a"), batchRow(W0, "b"), batchRow(W0 + MINUTE, "a")));
            // The next run of the range drops every key of 10:01 and one of 10:00, keeps a@10:00 as it stands and
            // adds 10:02: 10:00 is logged for the key it removed, not again for the row it left alone.
            replace(c, List.of(batchRow(W0, "a"), batchRow(W0 + 2 * MINUTE, "a")));
            // The same rows again: nothing changes, nothing is logged.
            replace(c, List.of(batchRow(W0, "a"), batchRow(W0 + 2 * MINUTE, "a")));
            // One more event in 10:02: only that window.
            replace(
                    c,
                    List.of(
                            batchRow(W0, "a"),
                            new WindowRow(
                                    WindowKey.of(W0 + 2 * MINUTE, "a", "web"),
                                    W0 + 3 * MINUTE,
                                    DefaultSet.values(2, 0, 0, BigInteger.TWO, 2))));
        }
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.text(c, LOG))
                    .isEqualTo("batch 10:00,batch 10:00,batch 10:01,batch 10:01,batch 10:02,batch 10:02");
        }
    }

    @Test
    void anyOtherWriteIsLoggedRowByRowAndATruncateNamesEveryRecordedWindow() throws Exception {
        String schema = stack.createMigratedSchema("wwhand");
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, revision) VALUES"
                    + " ('2026-11-29T10:00Z', '2026-11-29T10:01Z', 'a', 'web', 1, 0, 0, 1, 1, 1),"
                    + " ('2026-11-29T10:01Z', '2026-11-29T10:02Z', 'a', 'web', 1, 0, 0, 1, 1, 1)");
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("stream 10:00,stream 10:01");
            st.execute("DELETE FROM window_writes");
            // Moving a row to another window writes both.
            st.execute("UPDATE stream_window_metrics SET window_start = '2026-11-29T10:02Z',"
                    + " window_end = '2026-11-29T10:03Z' WHERE window_start = '2026-11-29T10:01Z'");
            st.execute("UPDATE stream_window_metrics SET impressions = 2 WHERE window_start = '2026-11-29T10:00Z'");
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("stream 10:00,stream 10:01,stream 10:02");
            st.execute("DELETE FROM window_writes");
            st.execute("DELETE FROM stream_window_metrics WHERE window_start = '2026-11-29T10:00Z'");
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("stream 10:00");
            st.execute("DELETE FROM window_writes");

            // Writing with the setting on without logging is a writer's broken promise: nothing is logged.
            c.setAutoCommit(false);
            st.execute("SET LOCAL recount.window_writes_logged = 'on'");
            st.execute("UPDATE stream_window_metrics SET impressions = 3");
            c.commit();
            c.setAutoCommit(true);
            assertThat(MigratedSchemas.text(c, LOG)).isEmpty();

            st.execute("INSERT INTO reconciliation_runs (range_from, range_to, status)"
                    + " VALUES ('2026-11-29T00:00Z', '2026-11-30T00:00Z', 'succeeded')");
            st.execute("INSERT INTO reconciled_windows (window_start, stream_keys, stream_fingerprint, batch_keys,"
                    + " batch_fingerprint, final_keys, final_fingerprint, reconciliation_run_id) VALUES"
                    + " ('2026-11-29T09:00Z', 1, 1, 0, 0, 0, 0, 1), ('2026-11-29T09:01Z', 1, 1, 0, 0, 0, 0, 1)");
            st.execute("TRUNCATE batch_window_metrics");
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("batch 09:00,batch 09:01");
        }
    }

    @Test
    void theMigrationNamesEveryWindowBothTablesHeldBeforeIt() throws Exception {
        String schema = stack.createSchema("wwmigrate");
        MigratedSchemas.migrate(stack, schema, "20");
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, revision) VALUES"
                    + " ('2026-11-29T10:00Z', '2026-11-29T10:01Z', 'a', 'web', 1, 0, 0, 1, 1, 1),"
                    + " ('2026-11-29T10:00Z', '2026-11-29T10:01Z', 'b', 'web', 1, 0, 0, 1, 1, 1)");
            st.execute("INSERT INTO batch_runs (mode, range_from, range_to, status) VALUES"
                    + " ('range', '2026-11-29T00:00Z', '2026-11-30T00:00Z', 'succeeded')");
            st.execute("INSERT INTO batch_window_metrics (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, run_id) VALUES"
                    + " ('2026-11-29T10:01Z', '2026-11-29T10:02Z', 'a', 'web', 1, 0, 0, 1, 1, 1)");
        }
        MigratedSchemas.migrate(stack, schema, null);
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            assertThat(MigratedSchemas.text(c, LOG)).isEqualTo("batch 10:01,stream 10:00");
        }
    }

    static void replace(Connection c, List<WindowRow> rows) throws SQLException {
        long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, W0, W0 + 3 * MINUTE, false);
        c.setAutoCommit(false);
        BATCH_TABLE.insertStaging(c, run, rows);
        BatchWindowMetricsTable.ReplaceResult r =
                BATCH_TABLE.replaceFromStaging(c, new BatchWindowMetricsTable.Range(W0, W0 + 3 * MINUTE), run);
        BatchRunsTable.succeed(c, run, rows.size(), r.written(), r.deleted(), null, null, null);
        c.commit();
        c.setAutoCommit(true);
    }
}
