package dev.recount.reconcile.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.config.PostgresSettings;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.WindowWritesTable;
import dev.recount.reconcile.Reconciler;
import dev.recount.reconcile.RunProgress;
import dev.recount.reconcile.RunResult;
import dev.recount.reconcile.ScopeResolver;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.testkit.LocalStack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reconcile throughput: keys compared per second for about a million window keys, end to end
 * (compare, corrections with their log, verification, report files). Not a test. Loads one day of 1-minute
 * windows × campaigns × channels, where 1 % of keys differ, 0.5 % exist only in the stream and 0.5 % only
 * in the batch, then reconciles the day twice: the first run finalizes every key, the second is the
 * idempotent rerun (nothing to change). See reconciler/README.md for the command.
 *
 * <p>Arguments: {@code [campaigns (100)] [channels (7)]}; 1440 windows × 100 × 7 = 1,008,000 keys.
 */
public final class ReconcileBench {
    public static final Instant DAY = Instant.parse("2026-11-28T00:00:00Z");
    static final int WINDOWS = 1440;

    public static void main(String[] args) throws Exception {
        int campaigns = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int channels = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        LocalStack stack = LocalStack.shared();
        String schema = stack.createMigratedSchema("bench_reconcile");
        long keys = (long) WINDOWS * campaigns * channels;
        System.out.printf(Locale.ROOT, "loading %,d window keys into schema %s ...%n", keys, schema);
        long t0 = System.nanoTime();
        try (Connection c = stack.adminConnection()) {
            c.setSchema(schema);
            load(c, campaigns, channels);
        }
        System.out.printf(Locale.ROOT, "loaded in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        Path root = Path.of(System.getProperty("recount.root", ".."))
                .toAbsolutePath()
                .normalize();
        Path reports = root.resolve("reconciler").resolve("target").resolve("bench-reports");
        String login = Role.RECONCILER.loginName(schema);
        try (HikariDataSource pool = Database.pool(
                new PostgresSettings(stack.jdbcUrl(), login, schema, 2), stack.password(login), Role.RECONCILER)) {
            RunProgress stages = Boolean.getBoolean("bench.stages") ? new StageTimes() : RunProgress.NONE;
            Reconciler r = new Reconciler(
                            pool,
                            new Reconciler.Settings(ZoneId.of("UTC"), DefaultSet.SETS, reports),
                            Clock.systemUTC())
                    .withProgress(stages);
            System.out.println();
            System.out.println(
                    "| run | keys compared | differing | values corrected | compare+correct s | check s | report s | total s | keys/s |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            for (String name : new String[] {"first (finalizes all keys)", "rerun (no change)"}) {
                RunResult res = r.reconcile(ScopeResolver.range(DAY, DAY.plus(Duration.ofDays(1))));
                stages.close();
                long compared =
                        res.set(DefaultSet.NAME).comparison().range().counts().compared();
                double total = res.timings().total().toNanos() / 1e9;
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %,d | %,d | %,d | %.2f | %.2f | %.2f | %.2f | %,.0f |%n",
                        name,
                        compared,
                        res.set(DefaultSet.NAME).comparison().range().counts().differing(),
                        res.valuesCorrected(),
                        secs(res.timings().reconcile()),
                        secs(res.timings().check()),
                        secs(res.timings().report()),
                        total,
                        compared / total);
            }
        }
        int cliReruns = Integer.getInteger("bench.cli-reruns", 0);
        if (cliReruns > 0) {
            Path dir = Files.createTempDirectory("reconcile-bench-cli-");
            Path config = dir.resolve("recount.properties");
            Files.writeString(config, "postgres.schema=" + schema + "\nreconcile.report-dir=" + reports + "\n");
            for (int i = 1; i <= cliReruns; i++) {
                cliRerun(root, config, dir.resolve("reconcile-" + i + ".log"), stack.environment(), keys, i);
            }
        }
        System.out.println();
        System.out.printf(
                Locale.ROOT,
                "machine: %d cores, Java %s, max heap %d MiB; reports under %s%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20,
                reports);
        System.exit(0);
    }

    /**
     * With -Dbench.cli-reruns=N: the rerun as users run it, {@code ./recount reconcile --date} in a JVM of its own
     * (the launcher's flags, nothing built), timed from starting the process to its exit. The in-JVM rows above run
     * in the JVM that ran the first run, whose code is already compiled; this row also pays the JVM's start, the
     * configuration, the pool and a cold report.
     */
    private static void cliRerun(Path root, Path config, Path log, Map<String, String> environment, long keys, int i)
            throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        root.resolve("recount").toString(),
                        "reconcile",
                        "--date",
                        LocalDate.ofInstant(DAY, ZoneId.of("UTC")).toString(),
                        "--config",
                        config.toString())
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(environment);
        pb.environment().put("RECOUNT_NO_BUILD", "1");
        pb.environment().put("RECOUNT_NO_LOCAL_ENV", "1");
        long t0 = System.nanoTime();
        int exit = pb.start().waitFor();
        double wall = (System.nanoTime() - t0) / 1e9;
        // The day differs beyond the exact tolerance on purpose (1 % of its keys): such a run exits 3, and succeeded.
        if (exit != ExitCode.OK.code() && exit != ExitCode.BEYOND_TOLERANCE.code()) {
            System.out.printf(
                    Locale.ROOT,
                    "| `./recount reconcile` rerun %d: exited %d (is the reconciler packaged? see %s) |%n",
                    i,
                    exit,
                    log);
            return;
        }
        System.out.printf(
                Locale.ROOT,
                "| `./recount reconcile` rerun %d (its own JVM, process wall) | %,d | | | | | | %.2f | %,.0f |%n",
                i,
                keys,
                wall,
                keys / wall);
    }

    /** With -Dbench.stages=true: how long each step of a run took, on standard error, as the step ends. */
    private static final class StageTimes implements RunProgress {
        private String stage;
        private long started;

        @Override
        public void stage(String name) {
            long now = System.nanoTime();
            if (stage != null) System.err.printf(Locale.ROOT, "  %6.2f s  %s%n", (now - started) / 1e9, stage);
            stage = name;
            started = now;
        }

        @Override
        public void rows(long done, long total) {}

        @Override
        public void close() {
            stage(null);
            stage = null;
        }
    }

    static double secs(Duration d) {
        return d.toNanos() / 1e9;
    }

    /** Generated server-side (generate_series): loading is not what is measured. */
    public static void load(Connection c, int campaigns, int channels) throws Exception {
        long batchRun = BatchRunsTable.start(
                c,
                BatchRunsTable.Mode.RANGE,
                DAY.toEpochMilli(),
                DAY.plus(Duration.ofDays(1)).toEpochMilli(),
                false);
        String keys = " FROM generate_series(0, " + (WINDOWS - 1) + ") w, generate_series(0, " + (campaigns - 1)
                + ") cp, generate_series(0, " + (channels - 1) + ") ch,"
                + " LATERAL (SELECT timestamptz '2026-11-28 00:00:00+00' + w * interval '1 minute' AS ts,"
                + " (w * 1000003 + cp * 101 + ch * 7) % 1000 AS sel, 100 + (w * 7 + cp * 13 + ch * 17) % 900 AS imp) x";
        String values = "ts, ts + interval '1 minute', 'campaign-' || cp, 'channel-' || ch, imp, imp / 20, imp / 200,"
                + " imp * 1250 + sel, imp + imp / 20 + imp / 200";
        try (Statement st = c.createStatement()) {
            st.execute("SET synchronous_commit = off");
            // As the stream's committer and the batch's replace write: each window logged once per side
            // (window_writes), not each row by the tables' triggers.
            c.setAutoCommit(false);
            WindowWritesTable.markLogged(c);
            List<Long> windows = new ArrayList<>();
            for (int w = 0; w < WINDOWS; w++) windows.add(DAY.toEpochMilli() + w * 60_000L);
            WindowWritesTable writes = new WindowWritesTable(DefaultSet.TABLES);
            writes.log(c, WindowWritesTable.Side.STREAM, windows);
            writes.log(c, WindowWritesTable.Side.BATCH, windows);
            // sel < 5: only in the stream; 5..9: only in the batch; 10..19: batch has one click and 1000 micros more.
            st.execute(
                    "INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id, impressions,"
                            + " clicks, conversions, spend_micros, events, revision) SELECT " + values + ", 1" + keys
                            + " WHERE sel NOT BETWEEN 5 AND 9");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO batch_window_metrics (window_start, window_end,"
                    + " campaign_id, channel_id, impressions, clicks, conversions, spend_micros, events, run_id)"
                    + " SELECT ts, ts + interval '1 minute', 'campaign-' || cp, 'channel-' || ch, imp,"
                    + " imp / 20 + CASE WHEN sel BETWEEN 10 AND 19 THEN 1 ELSE 0 END, imp / 200,"
                    + " imp * 1250 + sel + CASE WHEN sel BETWEEN 10 AND 19 THEN 1000 ELSE 0 END,"
                    + " imp + imp / 20 + imp / 200 + CASE WHEN sel BETWEEN 10 AND 19 THEN 1 ELSE 0 END, ?" + keys
                    + " WHERE sel >= 5")) {
                ps.setLong(1, batchRun);
                ps.executeUpdate();
            }
            c.commit();
            c.setAutoCommit(true);
            BatchRunsTable.succeed(c, batchRun, 0, 0, 0, null, null, null);
            st.execute("ANALYZE stream_window_metrics");
            st.execute("ANALYZE batch_window_metrics");
        }
    }
}
