package dev.recount.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.PostgresSettings;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Least privilege for real, on a real PostgreSQL: each component's login (a member of its schema's group role, as
 * {@code ./recount up} creates it) can do its own work and nothing else, even after {@code RESET ROLE}; not in another
 * component's tables, not in another schema's tables of its own kind; finance only reads; the cluster-wide roles of
 * V1/V6 keep nothing in a migrated schema; and several schemas migrate at once.
 *
 * <p>Tests module db, but lives in deploy (like SchemaITCase): it needs the local stack.
 */
class ScopedRolesITCase {
    /** One write into each table a component writes, keyed by table; valid rows, so only privileges can refuse them. */
    static final Map<String, String> WRITES = new LinkedHashMap<>();

    static final Map<Role, List<String>> OWN_TABLES = new EnumMap<>(Role.class);

    static {
        WRITES.put(
                "stream_window_metrics",
                "INSERT INTO %s.stream_window_metrics VALUES (now(), now() + interval '1 minute',"
                        + " 'c', 'w', 0, 0, 0, 0, 0, 1, now())");
        WRITES.put(
                "stream_progress",
                "INSERT INTO %s.stream_progress (job_name, lake_complete_until, checkpoint_id)"
                        + " VALUES ('j', now(), 1)");
        WRITES.put("batch_runs", "INSERT INTO %s.batch_runs (mode, status) VALUES ('range', 'running')");
        WRITES.put("batch_window_metrics", "DELETE FROM %s.batch_window_metrics");
        WRITES.put(
                "reconciliation_runs",
                "INSERT INTO %s.reconciliation_runs (range_from, range_to, status)"
                        + " VALUES (now(), now() + interval '1 hour', 'running')");
        WRITES.put("window_corrections", "UPDATE %s.window_corrections SET events = events");
        WRITES.put(
                "correction_log",
                "INSERT INTO %1$s.correction_log (reconciliation_run_id, window_start, campaign_id,"
                        + " channel_id, metric, reason) VALUES ((SELECT max(run_id) FROM %1$s.reconciliation_runs), now(), 'c', 'w',"
                        + " 'events', 'x')");
        // V13: attribution.
        WRITES.put(
                "stream_attribution_metrics",
                "INSERT INTO %s.stream_attribution_metrics VALUES (now(),"
                        + " now() + interval '1 minute', 'c', 'w', 0, 0, 0, 0, 1, now())");
        WRITES.put("batch_attribution_metrics", "DELETE FROM %s.batch_attribution_metrics");
        WRITES.put("attribution_diffs", "DELETE FROM %s.attribution_diffs");
        WRITES.put(
                "attribution_corrections",
                "UPDATE %s.attribution_corrections SET attributed_clicks = attributed_clicks");
        // In order: a correction logs against a reconciliation run.
        OWN_TABLES.put(Role.STREAM, List.of("stream_window_metrics", "stream_progress", "stream_attribution_metrics"));
        OWN_TABLES.put(Role.BATCH, List.of("batch_runs", "batch_window_metrics", "batch_attribution_metrics"));
        OWN_TABLES.put(
                Role.RECONCILER,
                List.of(
                        "reconciliation_runs",
                        "window_corrections",
                        "correction_log",
                        "attribution_diffs",
                        "attribution_corrections"));
        OWN_TABLES.put(Role.FINANCE, List.of());
    }

    static LocalStack stack;
    static String schema;
    static String other;

    @BeforeAll
    static void twoSchemas() {
        stack = LocalStack.shared();
        schema = stack.createMigratedSchema("scoped");
        other = stack.createMigratedSchema("scoped_other");
    }

    @Test
    void noLoginCanWriteAnotherComponentsTablesEvenAfterResetRole() throws SQLException {
        for (Role role : Role.values()) {
            try (Connection c = stack.loginConnection(schema, role);
                    Statement s = c.createStatement()) {
                s.execute("RESET ROLE");
                assertThat(scalar(s, "SELECT current_user")).isEqualTo(role.loginName(schema));
                for (Map.Entry<String, String> write : WRITES.entrySet()) {
                    if (OWN_TABLES.get(role).contains(write.getKey())) continue;
                    String sql = write.getValue().formatted(schema);
                    assertRefused(s, sql, role + " login: " + sql, "permission denied for table " + write.getKey());
                }
            }
        }
    }

    @Test
    void noLoginCanTouchAnotherSchemasTablesOfItsOwnKind() throws SQLException {
        for (Role role : Role.values()) {
            try (Connection c = stack.loginConnection(schema, role);
                    Statement s = c.createStatement()) {
                s.execute("RESET ROLE");
                List<String> attempts = new ArrayList<>();
                OWN_TABLES.get(role).forEach(t -> attempts.add(WRITES.get(t).formatted(other)));
                if (role == Role.FINANCE) attempts.add("SELECT count(*) FROM " + other + ".window_metrics");
                assertThat(attempts).isNotEmpty();
                for (String sql : attempts) {
                    assertRefused(
                            s, sql, role + " login of " + schema + ": " + sql, "permission denied for schema " + other);
                }
                // Nor can it become a role that could: neither the other schema's nor a cluster-wide one.
                assertRefused(
                        s, "SET ROLE " + role.roleName(other), role + ": SET ROLE", "permission denied to set role");
                assertRefused(
                        s, "SET ROLE " + role.sharedRoleName(), role + ": SET ROLE", "permission denied to set role");
            }
        }
    }

    @Test
    void eachLoginDoesItsOwnWork() throws SQLException {
        for (Role role : List.of(Role.STREAM, Role.BATCH, Role.RECONCILER)) {
            try (Connection c = stack.loginConnection(schema, role);
                    Statement s = c.createStatement()) {
                for (String table : OWN_TABLES.get(role))
                    s.execute(WRITES.get(table).formatted(schema));
            }
        }
    }

    @Test
    void batchReadsTheStreamsWindowBoundsButNotItsNumbers() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.BATCH);
                Statement s = c.createStatement()) {
            s.executeQuery("SELECT DISTINCT window_end - window_start FROM " + schema + ".stream_window_metrics")
                    .close();
            assertRefused(
                    s,
                    "SELECT events FROM " + schema + ".stream_window_metrics",
                    "batch reading stream counts",
                    "permission denied for table stream_window_metrics");
        }
    }

    @Test
    void financeCanOnlyRead() throws SQLException {
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement s = c.createStatement()) {
            s.execute("RESET ROLE");
            for (String view : List.of(
                    "window_metrics",
                    "reconciliation_runs",
                    "reconciliation_diffs",
                    "correction_log",
                    "attribution_metrics",
                    "attribution_diffs")) {
                s.executeQuery("SELECT count(*) FROM " + view).close();
            }
            for (String raw : List.of(
                    "stream_window_metrics",
                    "batch_window_metrics",
                    "batch_runs",
                    "stream_progress",
                    "stream_attribution_metrics",
                    "batch_attribution_metrics",
                    "attribution_corrections")) {
                assertRefused(
                        s, "SELECT count(*) FROM " + raw, "finance reads " + raw, "permission denied for table " + raw);
            }
            assertRefused(
                    s, "DELETE FROM correction_log", "finance deletes", "permission denied for table correction_log");
            assertRefused(
                    s,
                    "CREATE TABLE " + schema + ".finance_notes (x int)",
                    "finance creates",
                    "permission denied for schema " + schema);
        }
    }

    /** Exactly V6's privileges, now on the schema's own roles; nobody else (the cluster-wide roles included) has any. */
    @Test
    void theSchemasRolesHoldExactlyTheirPrivilegesAndTheSharedRolesNone() throws SQLException {
        Map<String, String> expected = new TreeMap<>();
        grant(expected, Role.STREAM, "stream_window_metrics", "INSERT,SELECT,UPDATE");
        grant(expected, Role.STREAM, "stream_progress", "INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_runs", "INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_window_metrics", "DELETE,INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_window_metrics_staging", "DELETE,INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_runs_run_id_seq", "SELECT,USAGE");
        grant(expected, Role.BATCH, "stream_progress", "SELECT");
        for (String t : List.of(
                "stream_window_metrics", "batch_window_metrics", "batch_runs", "stream_progress", "window_metrics")) {
            grant(expected, Role.RECONCILER, t, "SELECT");
        }
        grant(expected, Role.RECONCILER, "reconciliation_runs", "INSERT,SELECT,UPDATE");
        grant(expected, Role.RECONCILER, "reconciliation_diffs", "DELETE,INSERT,SELECT,UPDATE");
        grant(expected, Role.RECONCILER, "window_corrections", "INSERT,SELECT,UPDATE");
        grant(expected, Role.RECONCILER, "correction_log", "INSERT,SELECT");
        grant(expected, Role.RECONCILER, "reconciled_windows", "INSERT,SELECT,UPDATE");
        // V17: written only by window_corrections' trigger (as the table's owner); the reconciler counts the rows.
        grant(expected, Role.RECONCILER, "window_corrections_writes", "SELECT");
        // V19: which range each partition of window_corrections holds (written only by the functions below).
        grant(expected, Role.RECONCILER, "window_corrections_partitions", "SELECT");
        // V21: the stream and the batch log the windows they write; the reconciler reads and forgets them.
        grant(expected, Role.STREAM, "window_writes", "INSERT");
        grant(expected, Role.BATCH, "window_writes", "INSERT");
        grant(expected, Role.RECONCILER, "window_writes", "DELETE,SELECT");
        // V24: the stream counts what it archived per lake hour; the batch checks the lake against it.
        grant(expected, Role.STREAM, "lake_archived_rows", "INSERT,SELECT");
        grant(expected, Role.BATCH, "lake_archived_rows", "DELETE,SELECT");
        // V25: backfill records `affected` could not settle yet, checked again by every run.
        grant(expected, Role.BATCH, "backfill_waiting", "DELETE,INSERT,SELECT,UPDATE");
        // V26: every component checks at start that the metric sets it computes or serves are migrated.
        for (Role role : Role.values()) grant(expected, role, "metric_sets", "SELECT");
        grant(expected, Role.RECONCILER, "reconciliation_runs_run_id_seq", "SELECT,USAGE");
        grant(expected, Role.RECONCILER, "correction_log_log_id_seq", "SELECT,USAGE");
        for (String t : List.of("window_metrics", "reconciliation_runs", "reconciliation_diffs", "correction_log")) {
            grant(expected, Role.FINANCE, t, "SELECT");
        }
        // V9: rows PostgreSQL refused, recorded by the stream, readable by those who account for them.
        grant(expected, Role.STREAM, "stream_rejected_rows", "INSERT,SELECT");
        grant(expected, Role.STREAM, "stream_rejected_rows_rejection_id_seq", "SELECT,USAGE");
        grant(expected, Role.RECONCILER, "stream_rejected_rows", "SELECT");
        grant(expected, Role.FINANCE, "stream_rejected_rows", "SELECT");
        // V12: the recorded time zone (the reconciler keeps it up to date) and the default sliding view.
        grant(expected, Role.RECONCILER, "serving_settings", "SELECT,UPDATE");
        grant(expected, Role.FINANCE, "serving_settings", "SELECT");
        grant(expected, Role.RECONCILER, "recent_sliding_metrics", "SELECT");
        grant(expected, Role.FINANCE, "recent_sliding_metrics", "SELECT");
        // V13: attribution, like the window metrics.
        grant(expected, Role.STREAM, "stream_attribution_metrics", "INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_attribution_metrics", "DELETE,INSERT,SELECT,UPDATE");
        grant(expected, Role.BATCH, "batch_attribution_metrics_staging", "DELETE,INSERT,SELECT,UPDATE");
        for (String t : List.of("stream_attribution_metrics", "batch_attribution_metrics", "attribution_metrics")) {
            grant(expected, Role.RECONCILER, t, "SELECT");
        }
        grant(expected, Role.RECONCILER, "attribution_diffs", "DELETE,INSERT,SELECT,UPDATE");
        grant(expected, Role.RECONCILER, "attribution_corrections", "INSERT,SELECT,UPDATE");
        grant(expected, Role.FINANCE, "attribution_metrics", "SELECT");
        grant(expected, Role.FINANCE, "attribution_diffs", "SELECT");

        Map<String, String> actual = new TreeMap<>();
        try (Connection c = stack.adminConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT coalesce(r.rolname, 'PUBLIC'), cl.relname, string_agg(a.privilege_type, ',' ORDER BY a.privilege_type)"
                                + " FROM pg_class cl JOIN pg_namespace n ON n.oid = cl.relnamespace"
                                + " CROSS JOIN LATERAL aclexplode(cl.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
                                + " WHERE n.nspname = ? AND a.grantee <> cl.relowner GROUP BY 1, 2")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) actual.put(rs.getString(1) + " " + rs.getString(2), rs.getString(3));
            }
            for (Role role : Role.values()) {
                try (PreparedStatement usage = c.prepareStatement("SELECT has_schema_privilege(?, ?, 'USAGE')")) {
                    usage.setString(1, role.sharedRoleName());
                    usage.setString(2, schema);
                    try (ResultSet rs = usage.executeQuery()) {
                        rs.next();
                        assertThat(rs.getBoolean(1))
                                .as(role.sharedRoleName() + " USAGE on " + schema)
                                .isFalse();
                    }
                }
            }
        }
        assertThat(actual).containsExactlyEntriesOf(expected);
    }

    /**
     * V12's functions (ratios, rollups, sliding sums): executable by the readers of window_metrics only, not PUBLIC;
     * V19's and V20's partition functions by the reconciler only; V23's schema version by every component.
     */
    @Test
    void onlyTheReadersMayExecuteTheServingFunctions() throws SQLException {
        Map<String, String> expected = new TreeMap<>();
        for (String f : V12_FUNCTIONS) {
            expected.put(Role.RECONCILER.roleName(schema) + " " + f, "EXECUTE");
            expected.put(Role.FINANCE.roleName(schema) + " " + f, "EXECUTE");
        }
        // V19, V20: a first reconciliation's partition of window_corrections, created, indexed and attached as the
        // owner.
        for (String f : List.of(
                "window_corrections_new_partition_of_batch",
                "window_corrections_index_partition",
                "window_corrections_attach_partition",
                "window_corrections_merge_partition")) {
            expected.put(Role.RECONCILER.roleName(schema) + " " + f, "EXECUTE");
        }
        // V23: every component reads the schema's version when it logs in.
        for (Role role : Role.values()) expected.put(role.roleName(schema) + " schema_version", "EXECUTE");
        Map<String, String> actual = new TreeMap<>();
        try (Connection c = stack.adminConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT coalesce(r.rolname, 'PUBLIC'), p.proname, string_agg(a.privilege_type, ',' ORDER BY a.privilege_type)"
                                + " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                                + " CROSS JOIN LATERAL aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a"
                                + " LEFT JOIN pg_roles r ON r.oid = a.grantee"
                                + " WHERE n.nspname = ? AND a.grantee <> p.proowner GROUP BY 1, 2")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // The append-only trigger function of correction_log (V4) is not for anyone to call.
                    if (rs.getString(2).startsWith("correction_log")) continue;
                    actual.put(rs.getString(1) + " " + rs.getString(2), rs.getString(3));
                }
            }
        }
        assertThat(actual).containsExactlyEntriesOf(expected);
    }

    /** What each login can read of V12, for real: finance and reconciler everything, the writers nothing. */
    @Test
    void theReadersReadRatiosRollupsAndSlidingSumsAndTheWritersCannot() throws SQLException {
        List<String> reads = List.of(
                "SELECT ctr, cvr, cpc_micros, cpm_micros, cost_per_conversion_micros FROM window_metrics",
                "SELECT * FROM hourly_metrics(now() - interval '1 day', now())",
                "SELECT * FROM daily_metrics(current_date - 90, current_date)",
                "SELECT * FROM sliding_metrics(5, now() - interval '1 hour', now())",
                "SELECT * FROM recent_sliding_metrics",
                "SELECT time_zone FROM serving_settings");
        for (Role role : List.of(Role.FINANCE, Role.RECONCILER)) {
            try (Connection c = stack.loginConnection(schema, role);
                    Statement s = c.createStatement()) {
                for (String sql : reads) s.executeQuery(sql).close();
            }
        }
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement s = c.createStatement()) {
            assertRefused(
                    s,
                    "UPDATE serving_settings SET time_zone = 'UTC'",
                    "finance updates serving_settings",
                    "permission denied for table serving_settings");
        }
        for (Role role : List.of(Role.STREAM, Role.BATCH)) {
            try (Connection c = stack.loginConnection(schema, role);
                    Statement s = c.createStatement()) {
                assertRefused(
                        s,
                        "SELECT * FROM hourly_metrics(now() - interval '1 day', now())",
                        role + " rollups",
                        "permission denied for function hourly_metrics");
                assertRefused(
                        s,
                        "SELECT * FROM recent_sliding_metrics",
                        role + " sliding",
                        "permission denied for view recent_sliding_metrics");
                assertRefused(s, "SELECT ctr(1, 2)", role + " ratio", "permission denied for function ctr");
                assertRefused(
                        s,
                        "UPDATE serving_settings SET time_zone = 'UTC'",
                        role + " serving_settings",
                        "permission denied for table serving_settings");
            }
        }
    }

    static final List<String> V12_FUNCTIONS = List.of(
            "exact_ratio",
            "ctr",
            "cvr",
            "cpc_micros",
            "cpm_micros",
            "cost_per_conversion_micros",
            "reconciled_ranges",
            "period_end",
            "local_midnight",
            "period_metrics",
            "hourly_metrics",
            "daily_metrics",
            "sliding_metrics");

    @Test
    void aComponentPoolRefusesTheAdministratorAndAnotherSchemasLogin() {
        PostgresSettings asAdmin = new PostgresSettings(stack.jdbcUrl(), stack.adminUser(), schema, 1);
        assertThatThrownBy(() -> Database.pool(asAdmin, stack.adminPassword(), Role.STREAM)
                        .close())
                .hasStackTraceContaining("login " + stack.adminUser() + " is a superuser")
                .hasStackTraceContaining(Role.STREAM.roleName(schema));

        String foreign = Role.BATCH.loginName(other);
        PostgresSettings wrongSchema = new PostgresSettings(stack.jdbcUrl(), foreign, schema, 1);
        assertThatThrownBy(() -> Database.pool(wrongSchema, stack.password(foreign), Role.BATCH)
                        .close())
                .hasStackTraceContaining(
                        "login " + foreign + " does not hold the privileges of " + Role.BATCH.roleName(schema));
    }

    @Test
    void severalSchemasMigrateAtOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<String>> schemas = new ArrayList<>();
            for (int i = 0; i < 3; i++) schemas.add(pool.submit(() -> stack.createMigratedSchema("parallel")));
            for (Future<String> f : schemas) {
                String s = f.get(2, TimeUnit.MINUTES);
                try (Connection c = stack.loginConnection(s, Role.STREAM);
                        Statement st = c.createStatement()) {
                    st.execute(WRITES.get("stream_window_metrics").formatted(s));
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void grant(Map<String, String> into, Role role, String object, String privileges) {
        into.put(role.roleName(schema) + " " + object, privileges);
    }

    private static void assertRefused(Statement s, String sql, String what, String message) {
        assertThatThrownBy(() -> s.execute(sql))
                .as(what)
                .isInstanceOfSatisfying(
                        SQLException.class,
                        e -> assertThat(e.getSQLState()).as(what).isEqualTo("42501"))
                .hasMessageContaining(message);
    }

    private static String scalar(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
