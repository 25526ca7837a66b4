package dev.recount.batch.testutils;

import dev.recount.batch.BackfillMain;
import dev.recount.batch.BackfillRunner;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Migrations;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.TestNames;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One test's slice of the shared local stack: its own PostgreSQL schema (migrated, with its component logins), lake
 * directory, backfill topic and consumer group, and a config file naming them; runs {@code backfill ...} in-process
 * against them, logged in as the schema's batch login. Fixtures and checks use the administrator.
 */
public final class BatchStack {
    /** The clock the CLI sees: fixed, so "yesterday" never depends on when the test runs. */
    public static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC);

    public final LocalStack stack = LocalStack.shared();
    public final String schema;
    public final String backfillTopic;
    public final String group;
    public final LakeFixture lake;
    private final Path dir;
    private final Map<String, String> settings = new LinkedHashMap<>();
    public String lastOut = "";
    public String lastErr = "";

    public BatchStack(Path dir) {
        this.dir = dir;
        // Migrated, with its logins: `backfill` logs in as the schema's batch login, never as the administrator.
        this.schema = stack.createMigratedSchema("batch");
        this.backfillTopic = TestNames.unique("late");
        this.group = TestNames.unique("affected");
        this.lake = new LakeFixture(SharedSpark.session(), dir.resolve("lake"));
        settings.put("postgres.jdbc-url", stack.jdbcUrl());
        settings.put("postgres.schema", schema);
        settings.put("postgres.password-dir", stack.passwordDir().toString());
        settings.put("postgres.pool-size", "2");
        settings.put("kafka.bootstrap-servers", stack.bootstrapServers());
        settings.put("topics.backfill", backfillTopic);
        settings.put("batch.affected-group", group);
        settings.put("batch.lock-timeout", "2s");
        settings.put("lake.path", lake.root().toString());
    }

    /**
     * Declares the metric sets of {@code yaml} (a definitions file, setting metric-sets.file) for the following runs,
     * and migrates the schema with them, as {@code ./recount migrate} does: their tables and registry rows.
     */
    public MetricSets metricSets(String yaml) throws IOException {
        MetricSets sets = declare(yaml);
        Migrations.apply(stack.jdbcUrl(), stack.adminUser(), stack.adminPassword(), schema, sets);
        return sets;
    }

    /** Declares the metric sets of {@code yaml} for the following runs, without migrating the schema for them. */
    public MetricSets declare(String yaml) throws IOException {
        Path file = Files.writeString(Files.createTempFile(dir, "metric-sets-", ".yaml"), yaml);
        set(MetricSets.FILE_SETTING, file.toString());
        return definitions();
    }

    /** The metric sets the following runs compute, as they read them. */
    public MetricSets definitions() {
        return MetricSets.fromConfig(RecountConfig.load(writeConfig(), Map.of()));
    }

    /** Overrides a setting for the following runs. */
    public BatchStack set(String key, String value) {
        settings.put(key, value);
        return this;
    }

    public int backfill(String... args) {
        return backfill(BackfillRunner.DEFAULT_DRIVER_MAX_ROWS, args);
    }

    /** Runs {@code backfill <args> --config <this test's file>} in-process; output lands in lastOut/lastErr. */
    public int backfill(long driverMaxRows, String... args) {
        return backfill(Map.of(), driverMaxRows, args);
    }

    /** As {@link #backfill(String...)}, with {@code environment} as the command's environment variables. */
    public int backfillWith(Map<String, String> environment, String... args) {
        return backfill(environment, BackfillRunner.DEFAULT_DRIVER_MAX_ROWS, args);
    }

    private int backfill(Map<String, String> environment, long driverMaxRows, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--config";
        all[args.length + 1] = writeConfig().toString();
        BackfillMain main = new BackfillMain(environment, CLOCK, SharedSpark.PROVIDER, driverMaxRows);
        int exit = BackfillMain.execute(main, new PrintWriter(out, true), new PrintWriter(err, true), all);
        lastOut = out.toString();
        lastErr = err.toString();
        return exit;
    }

    /** A settings file with this test's settings as they are now (for commands other than backfill). */
    public Path configFile() {
        return writeConfig();
    }

    private synchronized Path writeConfig() {
        StringBuilder text = new StringBuilder();
        settings.forEach((k, v) ->
                text.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        try {
            return Files.writeString(Files.createTempFile(dir, "recount-", ".properties"), text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A connection as the administrator, working in this test's schema. */
    public Connection admin() throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    public void lakeCompleteUntil(Instant until) throws SQLException {
        try (Connection c = admin()) {
            StreamProgressTable.advance(c, "test-stream-job", until.toEpochMilli(), 1, "test");
        }
    }

    /** The default set's batch rows. */
    public List<WindowRow> batchRows() throws SQLException {
        return batchRows(MetricSets.defaults().defaultSet().orElseThrow());
    }

    /** {@code set}'s batch rows, in key order. */
    public List<WindowRow> batchRows(MetricSet set) throws SQLException {
        try (Connection c = admin()) {
            return new BatchWindowMetricsTable(new SetTables(set))
                    .readRange(
                            c,
                            Instant.parse("2000-01-01T00:00:00Z").toEpochMilli(),
                            Instant.parse("2100-01-01T00:00:00Z").toEpochMilli());
        }
    }

    public BatchRunsTable.Run lastRun() throws SQLException {
        return runs().get(runs().size() - 1);
    }

    public BatchRunsTable.Run lastRunOfMode(BatchRunsTable.Mode mode) throws SQLException {
        List<BatchRunsTable.Run> all = runs();
        for (int i = all.size() - 1; i >= 0; i--) {
            if (all.get(i).mode() == mode) return all.get(i);
        }
        throw new AssertionError("no " + mode + " run");
    }

    public List<BatchRunsTable.Run> runs() throws SQLException {
        List<BatchRunsTable.Run> runs = new ArrayList<>();
        try (Connection c = admin();
                PreparedStatement ps = c.prepareStatement("SELECT run_id FROM batch_runs ORDER BY run_id");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) runs.add(BatchRunsTable.find(c, rs.getLong(1)).orElseThrow());
        }
        return runs;
    }

    /** How many batch windows {@code window_writes} holds (one entry per window per writing transaction). */
    public long batchWindowWritesLogged() throws SQLException {
        try (Connection c = admin();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM window_writes WHERE side = 'batch'");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The run that last changed each batch row, by window key. */
    public Map<String, Long> rowRunIds() throws SQLException {
        Map<String, Long> ids = new LinkedHashMap<>();
        try (Connection c = admin();
                PreparedStatement ps = c.prepareStatement("SELECT window_start, campaign_id, channel_id, run_id"
                        + " FROM batch_window_metrics ORDER BY 1, 2, 3");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                ids.put(
                        rs.getObject(1, java.time.OffsetDateTime.class).toInstant() + "/" + rs.getString(2) + "/"
                                + rs.getString(3),
                        rs.getLong(4));
            }
        }
        return ids;
    }
}
