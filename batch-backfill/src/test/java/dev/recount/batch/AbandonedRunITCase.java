package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import dev.recount.db.tables.BatchRunsTable.Status;
import dev.recount.testkit.ServerProcesses;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backfill killed mid-run (kill -9, OOM, lost machine) leaves its run "running" with staged rows. The next run
 * fails it and drops those rows — but never a run that is still alive. Runs are simulated with this test's own
 * connections: {@link BatchRunsTable#start} on a connection is exactly what a backfill does first, and closing
 * that connection is what PostgreSQL sees when the process dies.
 */
class AbandonedRunITCase {
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        // Every declared set's staging tables are cleared, not only the default set's.
        t.metricSets(TestSets.THREE_SETS);
        t.lakeCompleteUntil(Instant.parse("2026-11-29T00:00:00Z"));
        t.lake.write(List.of(LakeEvent.of("e1", "click", W, "c1", "ch1", 5, 1)));
    }

    @Test
    void theNextRunFailsDeadRunsAndDropsTheirStagedRowsButLeavesLiveOnesAlone() throws Exception {
        long dead;
        int killedBackend;
        try (Connection killed = t.admin()) {
            killedBackend = ServerProcesses.of(killed);
            dead = BatchRunsTable.start(killed, Mode.RANGE, W, W + 60_000, false);
            stage(killed, dead, 3);
        } // the session ends: as if the process had died
        ServerProcesses.awaitEnded(t::admin, killedBackend, Duration.ofSeconds(30));
        int aliveBackend;
        try (Connection alive = t.admin()) {
            aliveBackend = ServerProcesses.of(alive);
            long live = BatchRunsTable.start(alive, Mode.NIGHTLY, W - 86_400_000, W, false);
            stage(alive, live, 2);

            assertThat(t.backfill("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:05:00Z"))
                    .as(t.lastErr)
                    .isZero();

            BatchRunsTable.Run deadRun = run(dead);
            assertThat(deadRun.status()).isEqualTo(Status.FAILED);
            assertThat(deadRun.error()).startsWith("abandoned: ");
            assertThat(stagedRows(dead)).isZero();
            assertThat(run(live).status())
                    .as("a run whose session lives is still running")
                    .isEqualTo(Status.RUNNING);
            assertThat(stagedRows(live)).isEqualTo(2);
            assertThat(t.lastRun().status()).isEqualTo(Status.SUCCEEDED);
            assertThat(t.batchRows()).hasSize(1);
        }
        // Now the second one's session has ended too; the next run cleans it up as well.
        ServerProcesses.awaitEnded(t::admin, aliveBackend, Duration.ofSeconds(30));
        long live = t.runs().stream()
                .filter(r -> r.mode() == Mode.NIGHTLY)
                .findFirst()
                .orElseThrow()
                .runId();
        assertThat(t.backfill("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:05:00Z"))
                .as(t.lastErr)
                .isZero();
        assertThat(run(live).status()).isEqualTo(Status.FAILED);
        assertThat(stagedRows(live)).isZero();
        assertThat(t.runs()).filteredOn(r -> r.status() == Status.RUNNING).isEmpty();
    }

    private BatchRunsTable.Run run(long runId) throws SQLException {
        try (Connection c = t.admin()) {
            return BatchRunsTable.find(c, runId).orElseThrow();
        }
    }

    private static final SetTables DEFAULT = new SetTables(TestSets.defaultSet());
    private static final SetTables SLOT = new SetTables(
            TestSets.parse(TestSets.THREE_SETS).set("campaign_slot").orElseThrow());

    /**
     * Stages {@code rows} window rows for the run, and as many attribution rows, as a run with attribution on does;
     * and as many window rows of the set campaign_slot.
     */
    private static void stage(Connection c, long runId, int rows) throws SQLException {
        stage(
                c,
                runId,
                rows,
                DEFAULT.batchWindowMetricsStaging() + " (run_id, window_start, window_end, campaign_id,"
                        + " channel_id, impressions, clicks, conversions, spend_micros, events)",
                "0, 1, 0, 5, 1");
        stage(
                c,
                runId,
                rows,
                SLOT.batchWindowMetricsStaging() + " (run_id, window_start, window_end, campaign_id, slot_id,"
                        + " impressions, spend_micros, events)",
                "0, 5, 1");
        BatchAttributionMetricsTable attribution = new BatchAttributionMetricsTable(DEFAULT);
        stage(c, runId, rows, attribution.stagingTable() + " (" + attribution.stagingColumns() + ")", "1, 0, 0, 5");
    }

    private static void stage(Connection c, long runId, int rows, String tableAndColumns, String metrics)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + tableAndColumns
                + " SELECT ?, to_timestamp(?::double precision / 1000), to_timestamp(?::double precision / 1000),"
                + " 'c' || g, 'ch', " + metrics + " FROM generate_series(1, ?) g")) {
            ps.setLong(1, runId);
            ps.setLong(2, W);
            ps.setLong(3, W + 60_000);
            ps.setInt(4, rows);
            ps.executeUpdate();
        }
    }

    /** The run's staged rows, windows and attribution; each stage() call puts the same number in all three. */
    private long stagedRows(long runId) throws SQLException {
        long windows = stagedRows(DEFAULT.batchWindowMetricsStaging(), runId);
        assertThat(stagedRows(DEFAULT.batchAttributionMetricsStaging(), runId))
                .as("attribution rows staged by run %d", runId)
                .isEqualTo(windows);
        assertThat(stagedRows(SLOT.batchWindowMetricsStaging(), runId))
                .as("campaign_slot rows staged by run %d", runId)
                .isEqualTo(windows);
        return windows;
    }

    private long stagedRows(String table, long runId) throws SQLException {
        try (Connection c = t.admin();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE run_id = ?")) {
            ps.setLong(1, runId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
