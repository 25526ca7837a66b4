package dev.recount.reconcile.testutils;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.LocalStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One fresh, migrated schema with its component logins on the shared local stack. Fixtures are written as the
 * administrative user (as the stream job and the batch layer would write them); the reconciler under test gets
 * {@link #reconcilerPool}, logged in as the schema's reconciler login, so its grants are exercised.
 */
public final class ReconcileDb implements AutoCloseable {
    public static final Duration WINDOW = Duration.ofMinutes(1);

    private final LocalStack stack;
    private final String schema;
    private HikariDataSource pool;

    private ReconcileDb(LocalStack stack, String schema) {
        this.stack = stack;
        this.schema = schema;
    }

    public static ReconcileDb fresh(String prefix) {
        LocalStack stack = LocalStack.shared();
        return new ReconcileDb(stack, stack.createMigratedSchema(prefix));
    }

    public String schema() {
        return schema;
    }

    public Connection admin() throws SQLException {
        Connection c = stack.adminConnection();
        c.setSchema(schema);
        return c;
    }

    public synchronized HikariDataSource reconcilerPool() {
        if (pool == null) pool = newReconcilerPool(2);
        return pool;
    }

    /** A pool of {@code size} connections as the schema's reconciler login, for the caller to close. */
    public HikariDataSource newReconcilerPool(int size) {
        String login = Role.RECONCILER.loginName(schema);
        return Database.pool(
                new PostgresSettings(stack.jdbcUrl(), login, schema, size), stack.password(login), Role.RECONCILER);
    }

    /**
     * The environment `./recount reconcile` sees after `. .recount/local.env`, less the administrator's password
     * (the launcher drops it): it logs in as the schema's reconciler login.
     */
    public Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("RECOUNT_JDBC_URL", stack.jdbcUrl());
        env.put("PGUSER", stack.adminUser());
        env.put("RECOUNT_PGPASSWORD_DIR", stack.passwordDir().toString());
        return env;
    }

    /** A config file pointing at this schema, with the given extra lines (e.g. tolerances). */
    public Path configFile(Path dir, String... lines) throws java.io.IOException {
        StringBuilder sb = new StringBuilder("postgres.schema=" + schema + "\npostgres.pool-size=2\n");
        for (String l : lines) sb.append(l).append('\n');
        Path file = dir.resolve("recount-" + schema + ".properties");
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
        return file;
    }

    public static WindowKey key(Instant windowStart, String campaign, String channel) {
        return new WindowKey(windowStart.toEpochMilli(), campaign, channel);
    }

    public static WindowMetrics m(long impressions, long clicks, long conversions, long spendMicros, long events) {
        return new WindowMetrics(impressions, clicks, conversions, spendMicros, events);
    }

    /** A stream row, written as the stream's committer writes it: in a transaction that logs its window. */
    public void stream(WindowKey key, WindowMetrics metrics, int revision) throws SQLException {
        streamAll(Map.of(key, metrics), revision);
    }

    /** Many stream rows at once (one connection, one batch, one transaction). */
    public void streamAll(Map<WindowKey, WindowMetrics> rows, int revision) throws SQLException {
        try (Connection c = admin()) {
            c.setAutoCommit(false);
            StreamWindowMetricsTable.upsert(
                    c,
                    rows.entrySet().stream()
                            .map(e -> new StreamWindowMetricsTable.Row(
                                    new WindowRow(
                                            e.getKey(),
                                            e.getKey().windowStartMillis() + WINDOW.toMillis(),
                                            e.getValue()),
                                    revision))
                            .toList());
            c.commit();
        }
    }

    /**
     * The benchmark's day (2026-11-28, 1-minute windows) for {@code campaigns} x {@code channels} keys per window,
     * generated server-side, with a succeeded batch run covering the day: 2 % of the keys differ between stream and
     * batch (see ReconcileBench).
     */
    public void loadDay(int campaigns, int channels) throws Exception {
        try (Connection c = admin()) {
            dev.recount.reconcile.bench.ReconcileBench.load(c, campaigns, channels);
        }
    }

    /** A succeeded `range` batch run over {@code [from, to)} that replaced it with {@code rows}; returns its id. */
    public long batchRange(Instant from, Instant to, Map<WindowKey, WindowMetrics> rows) throws SQLException {
        return batch(
                BatchRunsTable.Mode.RANGE,
                new BatchWindowMetricsTable.Range(from.toEpochMilli(), to.toEpochMilli()),
                from.toEpochMilli(),
                to.toEpochMilli(),
                rows,
                null);
    }

    /**
     * A succeeded `affected` batch run that recomputed exactly the windows of {@code rows}, recording them as the
     * batch job does ({@link BatchRunsTable#DETAILS_WINDOWS}).
     */
    public long batchAffected(Map<WindowKey, WindowMetrics> rows) throws SQLException {
        List<Long> starts = rows.keySet().stream()
                .map(WindowKey::windowStartMillis)
                .distinct()
                .sorted()
                .toList();
        String details = starts.stream()
                .map(s -> "\"" + Instant.ofEpochMilli(s) + "\"")
                .collect(java.util.stream.Collectors.joining(
                        ", ", "{\"" + BatchRunsTable.DETAILS_WINDOWS + "\": [", "]}"));
        return batch(
                BatchRunsTable.Mode.AFFECTED,
                new BatchWindowMetricsTable.Windows(starts),
                starts.get(0),
                starts.get(starts.size() - 1) + WINDOW.toMillis(),
                rows,
                details);
    }

    private long batch(
            BatchRunsTable.Mode mode,
            BatchWindowMetricsTable.Scope scope,
            long from,
            long to,
            Map<WindowKey, WindowMetrics> rows,
            String details)
            throws SQLException {
        try (Connection c = admin()) {
            long runId = BatchRunsTable.start(c, mode, from, to, false);
            c.setAutoCommit(false);
            BatchWindowMetricsTable.insertStaging(
                    c,
                    runId,
                    rows.entrySet().stream()
                            .map(e -> new WindowRow(
                                    e.getKey(), e.getKey().windowStartMillis() + WINDOW.toMillis(), e.getValue()))
                            .toList());
            BatchWindowMetricsTable.ReplaceResult r = BatchWindowMetricsTable.replaceFromStaging(c, scope, runId);
            BatchRunsTable.succeed(c, runId, 0, r.written(), r.deleted(), null, null, details);
            c.commit();
            return runId;
        }
    }

    @Override
    public void close() {
        if (pool != null) pool.close();
    }
}
