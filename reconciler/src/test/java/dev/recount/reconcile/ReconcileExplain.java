package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.db.Database;
import dev.recount.db.Migrations;
import dev.recount.db.Role;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.reconcile.bench.ReconcileBench;
import dev.recount.reconcile.testutils.DefaultSet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Where a run spends its time (not a test): EXPLAIN (ANALYZE, BUFFERS) of each statement of a reconciliation of
 * the benchmark's day, in the run's own transaction settings, rolled back afterwards. Connects with
 * {@code RECOUNT_JDBC_URL}, {@code PGUSER} and {@code PGPASSWORD} (what {@code . .recount/local.env} exports). The
 * statements are those of a run that reconciles every window key by key (a first run); a rerun whose windows are
 * unchanged runs only the survey, the diff copy and the diff counts.
 *
 * <pre>
 *   ReconcileExplain load SCHEMA [campaigns] [channels]   create and migrate SCHEMA, load the benchmark's day
 *   ReconcileExplain first SCHEMA                         explain a first run (nothing finalized yet)
 *   ReconcileExplain rerun SCHEMA                         apply one run, then explain the rerun
 * </pre>
 */
public final class ReconcileExplain {
    private static final String EXPLAIN = "EXPLAIN (ANALYZE, BUFFERS) ";

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ReconcileExplain load|first|rerun SCHEMA [campaigns] [channels]");
            System.exit(2);
        }
        String url = System.getenv("RECOUNT_JDBC_URL"),
                user = System.getenv("PGUSER"),
                password = System.getenv("PGPASSWORD");
        String schema = args[1];
        Scope day = ScopeResolver.range(ReconcileBench.DAY, ReconcileBench.DAY.plus(Duration.ofDays(1)));
        switch (args[0]) {
            case "load" -> {
                try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement st = c.createStatement()) {
                    st.execute("CREATE SCHEMA " + schema);
                }
                Migrations.apply(url, user, password, schema);
                try (Connection c = DriverManager.getConnection(url, user, password)) {
                    c.setSchema(schema);
                    ReconcileBench.load(
                            c,
                            args.length > 2 ? Integer.parseInt(args[2]) : 100,
                            args.length > 3 ? Integer.parseInt(args[3]) : 7);
                }
            }
            case "rerun" -> {
                // The reconciler refuses to run as a superuser: apply the first run as a login of its role, made
                // for this and dropped after.
                String login = schema + "_explain_login",
                        loginPassword = java.util.UUID.randomUUID().toString();
                try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement st = c.createStatement()) {
                    st.execute("CREATE ROLE " + login + " LOGIN PASSWORD '" + loginPassword + "' IN ROLE "
                            + Role.RECONCILER.roleName(schema));
                }
                try (HikariDataSource pool =
                        Database.pool(new PostgresSettings(url, login, schema, 2), loginPassword, Role.RECONCILER)) {
                    Path reports = Files.createTempDirectory("reconcile-explain-");
                    RunResult r = new Reconciler(
                                    pool,
                                    new Reconciler.Settings(ZoneId.of("UTC"), DefaultSet.SETS, reports),
                                    Clock.systemUTC())
                            .reconcile(day);
                    System.out.printf(
                            Locale.ROOT,
                            "applied run %d in %.2f s; explaining the rerun%n",
                            r.runId(),
                            r.timings().total().toNanos() / 1e9);
                } finally {
                    try (Connection c = DriverManager.getConnection(url, user, password);
                            Statement st = c.createStatement()) {
                        st.execute("DROP ROLE " + login);
                    }
                }
                explain(url, user, password, schema, day);
            }
            case "first" -> explain(url, user, password, schema, day);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static void explain(String url, String user, String password, String schema, Scope scope)
            throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            c.setSchema(schema);
            long runId = ReconciliationRunsTable.start(c, scope.fromMillis(), scope.toMillis(), null);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("SET LOCAL work_mem = '" + Reconciler.WORK_MEM + "'");
            }
            Map<String, Sql> statements = new LinkedHashMap<>();
            ReconcileStatements sql = new ReconcileStatements(DefaultSet.TABLES);
            ScopeDays days = ScopeDays.of(scope, ZoneId.of("UTC"));
            statements.put("uncovered", sql.uncovered(scope));
            statements.put("survey stream", sql.windowSurvey(scope, ReconcileStatements.STREAM));
            statements.put("survey batch", sql.windowSurvey(scope, ReconcileStatements.BATCH));
            statements.put("survey batch per campaign-day", sql.batchDays(scope, days));
            statements.put("reconcile", sql.reconcile(scope, runId, true));
            statements.put("diffCounts", sql.diffCounts(runId, days));
            statements.put("finalRows", sql.finalRows(scope));
            statements.put(
                    "streamKeysNotFinalized",
                    sql.streamKeysNotFinalized(scope, runId, DefaultSet.TABLES.windowCorrections()));
            statements.put("finalFingerprints", sql.finalFingerprints(scope));
            for (Map.Entry<String, Sql> e : statements.entrySet()) {
                System.out.println("==== " + e.getKey());
                long t = System.nanoTime();
                try (PreparedStatement ps = e.getValue().prepareWithPrefix(c, EXPLAIN);
                        ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) System.out.println(rs.getString(1));
                }
                System.out.printf(Locale.ROOT, "---- %s: %.3f s%n", e.getKey(), (System.nanoTime() - t) / 1e9);
            }
            c.rollback();
            c.setAutoCommit(true);
            ReconciliationRunsTable.fail(c, runId, "EXPLAIN only (rolled back)");
            ReconciliationRunsTable.releaseLiveness(c, runId);
        }
    }
}
