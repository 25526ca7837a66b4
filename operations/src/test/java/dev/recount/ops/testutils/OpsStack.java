package dev.recount.ops.testutils;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.ops.OperationsEnvironment;
import dev.recount.ops.OperationsMain;
import dev.recount.testkit.DefaultSet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A test's batch stack (schema, lake, backfill topic) plus what nightly and correct need on top: stream rows, a
 * report directory, and the commands run in-process with the test's fixed clock and the shared SparkSession.
 */
public final class OpsStack {
    private static final StreamWindowMetricsTable STREAM_TABLE = new StreamWindowMetricsTable(DefaultSet.TABLES);

    public static final long MINUTE = 60_000;

    public final BatchStack batch;
    public String lastOut = "";
    public String lastErr = "";

    public OpsStack(Path dir) {
        this.batch = new BatchStack(dir);
        batch.set("reconcile.report-dir", dir.resolve("reports").toString());
    }

    /** Runs {@code nightly|correct <args> --config <this test's file>} in-process; output lands in lastOut/lastErr. */
    public int run(String... args) {
        return runWith(Map.of(), args);
    }

    /** As {@link #run}, with these environment variables. */
    public int runWith(Map<String, String> variables, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--config");
        all.add(batch.configFile().toString());
        int exit = OperationsMain.execute(
                new OperationsEnvironment(variables, BatchStack.CLOCK, SharedSpark.PROVIDER),
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                all.toArray(String[]::new));
        lastOut = out.toString();
        lastErr = err.toString();
        return exit;
    }

    /** What the streaming job wrote for one window key. */
    public void stream(long windowStart, String campaign, String channel, MeasureValues m) throws SQLException {
        try (Connection c = batch.admin()) {
            STREAM_TABLE.upsert(
                    c,
                    List.of(new StreamWindowMetricsTable.Row(
                            new WindowRow(WindowKey.of(windowStart, campaign, channel), windowStart + MINUTE, m), 1)));
        }
    }

    /** Succeeded reconciliation runs, oldest first. */
    public List<ReconciliationRunsTable.Run> reconciliations() throws SQLException {
        List<ReconciliationRunsTable.Run> runs = new ArrayList<>();
        try (Connection c = batch.admin();
                PreparedStatement ps = c.prepareStatement("SELECT run_id FROM reconciliation_runs ORDER BY run_id");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next())
                runs.add(ReconciliationRunsTable.find(c, rs.getLong(1)).orElseThrow());
        }
        return runs;
    }
}
