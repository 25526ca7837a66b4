package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * V19 makes {@code window_corrections} a partitioned table: the corrections that existed before stay and are served
 * as before, and everything that wrote or read the table still does.
 */
class WindowCorrectionsPartitionsITCase {
    /** What window_metrics serves and window_corrections holds, row by row. */
    static final String SERVED = "SELECT string_agg(concat_ws(' ', window_start, window_end, campaign_id, channel_id,"
            + " impressions, clicks, conversions, spend_micros, events, source, is_final, updated_at), E'\\n'"
            + " ORDER BY window_start, campaign_id, channel_id) FROM window_metrics";

    static final String CORRECTIONS = "SELECT string_agg(t::text, E'\\n' ORDER BY window_start, campaign_id,"
            + " channel_id) FROM window_corrections t";

    static LocalStack stack;

    @BeforeAll
    static void startStack() {
        stack = LocalStack.shared();
    }

    @Test
    void theMigrationKeepsEveryCorrectionAndServesItAsBefore() throws Exception {
        String schema = stack.createSchema("wcp");
        MigratedSchemas.migrate(stack, schema, "18");
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO reconciliation_runs (range_from, range_to, status)"
                    + " VALUES ('2026-11-27T00:00Z', '2026-11-29T00:00Z', 'succeeded')");
            st.execute("INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, revision) VALUES"
                    + " ('2026-11-28T23:59Z', '2026-11-29T00:00Z', 'a', 'web', 5, 1, 0, 10, 6, 1),"
                    + " ('2026-11-29T00:00Z', '2026-11-29T00:01Z', 'a', 'web', 7, 1, 0, 10, 8, 1)");
            st.execute("INSERT INTO window_corrections (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, removed, reconciliation_run_id,"
                    + " batch_run_id, finalized_at) VALUES"
                    + " ('2026-11-27T10:00Z', '2026-11-27T10:01Z', 'a', 'web', 1, 0, 0, 100, 1, false, 1, NULL,"
                    + " '2026-11-29T01:00Z'),"
                    + " ('2026-11-28T23:59Z', '2026-11-29T00:00Z', 'a', 'web', 4, 1, 0, 10, 5, false, 1, NULL,"
                    + " '2026-11-29T01:00Z'),"
                    + " ('2026-11-28T23:59Z', '2026-11-29T00:00Z', 'b', 'app', 0, 0, 0, 0, 0, true, 1, NULL,"
                    + " '2026-11-29T01:00Z')");
        }
        String served, corrections;
        try (Connection c = MigratedSchemas.admin(stack, schema)) {
            served = MigratedSchemas.text(c, SERVED);
            corrections = MigratedSchemas.text(c, CORRECTIONS);
        }

        MigratedSchemas.migrate(stack, schema, null);
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            assertThat(MigratedSchemas.text(c, SERVED)).isEqualTo(served);
            assertThat(MigratedSchemas.text(c, CORRECTIONS)).isEqualTo(corrections);
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_legacy"))
                    .isEqualTo(3);
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT partition_name || ' ' || bounds::text || ' ' || attached"
                                    + " FROM window_corrections_partitions"))
                    .as("up to the UTC midnight after the last window")
                    .isEqualTo("window_corrections_legacy (,\"2026-11-29 00:00:00+00\") true");
            // Writes still go through window_corrections, to the legacy or the default partition, and count once.
            long writes = MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_writes");
            st.execute("UPDATE window_corrections SET impressions = 9 WHERE campaign_id = 'a'"
                    + " AND window_start = '2026-11-28T23:59Z'");
            st.execute("INSERT INTO window_corrections (window_start, window_end, campaign_id, channel_id,"
                    + " impressions, clicks, conversions, spend_micros, events, reconciliation_run_id) VALUES"
                    + " ('2026-11-29T00:00Z', '2026-11-29T00:01Z', 'a', 'web', 7, 1, 0, 10, 8, 1)");
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_writes"))
                    .isEqualTo(writes + 2);
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_default"))
                    .isEqualTo(1);
            assertThat(MigratedSchemas.count(
                            c, "SELECT count(*) FROM window_metrics WHERE is_final AND campaign_id = 'a'"))
                    .isEqualTo(3);
            // A hand edit straight into a partition counts as a write too.
            st.execute("UPDATE window_corrections_default SET clicks = 2");
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_writes"))
                    .isEqualTo(writes + 3);
            // The legacy range can have no partition of its own.
            assertThat(MigratedSchemas.text(
                            c,
                            "SELECT window_corrections_new_partition_of_batch('2026-11-28T00:00Z', '2026-11-29T00:00Z', 1,"
                                    + " '2026-11-28T00:00Z', '2026-11-29T00:00Z', NULL) IS NULL"))
                    .isEqualTo("t");
        }
    }

    @Test
    void anEmptyTableLeavesNoLegacyPartitionAndRefusesBadRanges() throws Exception {
        String schema = stack.createMigratedSchema("wcp");
        try (Connection c = MigratedSchemas.admin(stack, schema);
                Statement st = c.createStatement()) {
            assertThat(MigratedSchemas.count(c, "SELECT count(*) FROM window_corrections_partitions"))
                    .isZero();
            assertThat(MigratedSchemas.count(
                            c,
                            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
                                    + " AND tablename = 'window_corrections_legacy'"))
                    .isZero();
            assertThatThrownBy(() -> st.execute(
                            "SELECT window_corrections_new_partition_of_batch('2026-11-29T00:00Z', '2026-11-28T00:00Z', 1,"
                                    + " '2026-11-29T00:00Z', '2026-11-28T00:00Z', NULL)"))
                    .hasMessageContaining("need finite range_from < range_to");
            assertThatThrownBy(() -> st.execute(
                            "SELECT window_corrections_new_partition_of_batch('-infinity', '2026-11-28T00:00Z',"
                                    + " 1, '2026-11-27T00:00Z', '2026-11-28T00:00Z', NULL)"))
                    .hasMessageContaining("need finite range_from < range_to");
        }
        // Only the reconciler may call them; finance may not.
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement st = c.createStatement()) {
            assertThatThrownBy(() -> st.execute(
                            "SELECT window_corrections_new_partition_of_batch('2026-11-28T00:00Z', '2026-11-29T00:00Z', 1,"
                                    + " '2026-11-28T00:00Z', '2026-11-29T00:00Z', NULL)"))
                    .hasMessageContaining("permission denied");
        }
    }
}
