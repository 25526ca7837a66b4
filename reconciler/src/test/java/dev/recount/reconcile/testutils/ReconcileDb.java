package dev.recount.reconcile.testutils;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.LocalStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One fresh, migrated schema with its component logins on the shared local stack, holding the objects of the metric
 * sets it is made for. Fixtures are written as the administrative user (as the stream job and the batch layer would
 * write them); the reconciler under test gets {@link #reconcilerPool}, logged in as the schema's reconciler login,
 * so its grants are exercised.
 */
public final class ReconcileDb implements AutoCloseable {
    /** The default set's window (window.size's default). */
    public static final Duration WINDOW = Duration.ofMinutes(1);

    /** The definitions built in: the default set alone. */
    public static final MetricSets DEFAULTS = DefaultSet.SETS;

    public static final MetricSet DEFAULT = DefaultSet.SET;

    private final LocalStack stack;
    private final String schema;
    private HikariDataSource pool;

    private ReconcileDb(LocalStack stack, String schema) {
        this.stack = stack;
        this.schema = schema;
    }

    /** A schema of the default set alone. */
    public static ReconcileDb fresh(String prefix) {
        return fresh(prefix, DEFAULTS);
    }

    /** A schema migrated with {@code sets}: every set's objects, as `./recount migrate` creates them. */
    public static ReconcileDb fresh(String prefix, MetricSets sets) {
        LocalStack stack = LocalStack.shared();
        return new ReconcileDb(stack, stack.createMigratedSchema(prefix, sets));
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

    /** A key of the default set: (window start, campaign, channel). */
    public static WindowKey key(Instant windowStart, String campaign, String channel) {
        return WindowKey.of(windowStart.toEpochMilli(), campaign, channel);
    }

    /** A key of any set: its window start and its dimensions' values in the set's order. */
    public static WindowKey key(Instant windowStart, String... dimensions) {
        return WindowKey.of(windowStart.toEpochMilli(), dimensions);
    }

    /** The default set's values: impressions, clicks, conversions, spend (micros), events. */
    public static MeasureValues m(long impressions, long clicks, long conversions, long spendMicros, long events) {
        return MeasureValues.of(impressions, clicks, conversions, spendMicros, events);
    }

    /** A stream row of the default set, written as the stream's committer writes it: in a transaction that logs its window. */
    public void stream(WindowKey key, MeasureValues values, int revision) throws SQLException {
        streamAll(Map.of(key, values), revision);
    }

    /** Many stream rows of the default set at once (one connection, one batch, one transaction). */
    public void streamAll(Map<WindowKey, MeasureValues> rows, int revision) throws SQLException {
        streamAll(DEFAULT, rows, revision);
    }

    /** Stream rows of {@code set}, each window as long as the set's. */
    public void streamAll(MetricSet set, Map<WindowKey, MeasureValues> rows, int revision) throws SQLException {
        try (Connection c = admin()) {
            c.setAutoCommit(false);
            new StreamWindowMetricsTable(new SetTables(set))
                    .upsert(
                            c,
                            rows.entrySet().stream()
                                    .map(e -> new StreamWindowMetricsTable.Row(
                                            new WindowRow(
                                                    e.getKey(),
                                                    e.getKey().windowStartMillis()
                                                            + set.window().toMillis(),
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

    /**
     * A succeeded `range` batch run of the default set over {@code [from, to)} that replaced it with {@code rows}, as
     * a run from before metric sets records it (no {@code metric_sets}); returns its id.
     */
    public long batchRange(Instant from, Instant to, Map<WindowKey, MeasureValues> rows) throws SQLException {
        return batch(
                BatchRunsTable.Mode.RANGE,
                from.toEpochMilli(),
                to.toEpochMilli(),
                Map.of(DEFAULT, rows),
                set -> new BatchWindowMetricsTable.Range(from.toEpochMilli(), to.toEpochMilli()),
                null,
                false);
    }

    /**
     * A succeeded `range` batch run of the sets of {@code rows} over {@code [from, to)}, recording them in {@code
     * metric_sets}: each set's rows replace its part of the range.
     */
    public long batchRange(Instant from, Instant to, Map<MetricSet, Map<WindowKey, MeasureValues>> rows, boolean sets)
            throws SQLException {
        return batch(
                BatchRunsTable.Mode.RANGE,
                from.toEpochMilli(),
                to.toEpochMilli(),
                rows,
                set -> new BatchWindowMetricsTable.Range(from.toEpochMilli(), to.toEpochMilli()),
                null,
                sets);
    }

    /**
     * A succeeded `affected` batch run of the default set that recomputed exactly the windows of {@code rows},
     * recording them as the batch job did before metric sets ({@link BatchRunsTable#DETAILS_WINDOWS}).
     */
    public long batchAffected(Map<WindowKey, MeasureValues> rows) throws SQLException {
        List<Long> starts = starts(rows);
        String details = starts.stream()
                .map(s -> "\"" + Instant.ofEpochMilli(s) + "\"")
                .collect(java.util.stream.Collectors.joining(
                        ", ", "{\"" + BatchRunsTable.DETAILS_WINDOWS + "\": [", "]}"));
        return batch(
                BatchRunsTable.Mode.AFFECTED,
                starts.get(0),
                starts.get(starts.size() - 1) + WINDOW.toMillis(),
                Map.of(DEFAULT, rows),
                set -> new BatchWindowMetricsTable.Windows(starts),
                details,
                false);
    }

    /**
     * A succeeded `affected` batch run of the sets of {@code rows} that recomputed, per set, exactly the windows of
     * its rows, recording them per set ({@code details.sets.<set>.windows}) and the sets in {@code metric_sets}.
     */
    public long batchAffectedOfSets(Map<MetricSet, Map<WindowKey, MeasureValues>> rows) throws SQLException {
        StringBuilder details = new StringBuilder("{\"sets\": {");
        long from = Long.MAX_VALUE, to = Long.MIN_VALUE;
        for (Map.Entry<MetricSet, Map<WindowKey, MeasureValues>> e : rows.entrySet()) {
            List<Long> starts = starts(e.getValue());
            if (details.charAt(details.length() - 1) != '{') details.append(", ");
            details.append('"').append(e.getKey().name()).append("\": {\"windows\": [");
            details.append(String.join(
                    ", ",
                    starts.stream()
                            .map(s -> "\"" + Instant.ofEpochMilli(s) + "\"")
                            .toList()));
            details.append("]}");
            from = Math.min(from, starts.get(0));
            to = Math.max(
                    to, starts.get(starts.size() - 1) + e.getKey().window().toMillis());
        }
        details.append("}}");
        return batch(
                BatchRunsTable.Mode.AFFECTED,
                from,
                to,
                rows,
                set -> new BatchWindowMetricsTable.Windows(starts(rows.get(set))),
                details.toString(),
                true);
    }

    private static List<Long> starts(Map<WindowKey, MeasureValues> rows) {
        return new ArrayList<>(new TreeSet<>(
                rows.keySet().stream().map(WindowKey::windowStartMillis).toList()));
    }

    private long batch(
            BatchRunsTable.Mode mode,
            long from,
            long to,
            Map<MetricSet, Map<WindowKey, MeasureValues>> rows,
            java.util.function.Function<MetricSet, BatchWindowMetricsTable.Scope> scope,
            String details,
            boolean recordSets)
            throws SQLException {
        try (Connection c = admin()) {
            long runId = BatchRunsTable.start(c, mode, from, to, false);
            c.setAutoCommit(false);
            long written = 0, deleted = 0;
            Map<String, MetricSet> byName = new TreeMap<>();
            rows.keySet().forEach(s -> byName.put(s.name(), s));
            for (MetricSet set : byName.values()) {
                BatchWindowMetricsTable table = new BatchWindowMetricsTable(new SetTables(set));
                table.insertStaging(
                        c,
                        runId,
                        rows.get(set).entrySet().stream()
                                .map(e -> new WindowRow(
                                        e.getKey(),
                                        e.getKey().windowStartMillis()
                                                + set.window().toMillis(),
                                        e.getValue()))
                                .toList());
                BatchWindowMetricsTable.ReplaceResult r = table.replaceFromStaging(c, scope.apply(set), runId);
                written += r.written();
                deleted += r.deleted();
            }
            BatchRunsTable.succeed(c, runId, 0, written, deleted, null, null, details);
            if (recordSets) {
                try (PreparedStatement ps =
                        c.prepareStatement("UPDATE batch_runs SET metric_sets = ? WHERE run_id = ?")) {
                    ps.setArray(1, c.createArrayOf("text", byName.keySet().toArray()));
                    ps.setLong(2, runId);
                    ps.executeUpdate();
                }
            }
            c.commit();
            return runId;
        }
    }

    @Override
    public void close() {
        if (pool != null) pool.close();
    }
}
