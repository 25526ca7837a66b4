package dev.recount.bench;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.date_format;
import static org.apache.spark.sql.functions.hash;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.timestamp_millis;
import static org.apache.spark.sql.functions.when;

import dev.recount.batch.BackfillMain;
import dev.recount.batch.BackfillRunner;
import dev.recount.batch.BackfillSettings;
import dev.recount.batch.LakeReader;
import dev.recount.batch.SparkSessions;
import dev.recount.batch.TimeRange;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.lake.LakeLayout;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.StreamProgressTable;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Benchmark (not a test): generates a lake of one day of synthetic events in the exact lake layout (once; it is
 * reused while it has the requested size), then times {@code backfill range} over that day end to end — lake
 * scan, de-duplication, aggregation, staging and the replace transaction — against a real PostgreSQL (the one
 * {@code ./recount up} started: {@code . .recount/local.env} first). Prints wall time and events/s per run.
 */
@Command(
        name = "batch-recompute-bench",
        mixinStandardHelpOptions = true,
        description = "Time `backfill range` over one generated day of events.")
public final class BatchRecomputeBench implements Callable<Integer> {
    @Option(
            names = "--events",
            defaultValue = "10000000",
            description = "Distinct events in the day (default: ${DEFAULT-VALUE}).")
    long events;

    @Option(
            names = "--duplicate-share",
            defaultValue = "0.01",
            description = "Extra copies of events, as a share of --events (default: ${DEFAULT-VALUE}).")
    double duplicateShare;

    @Option(
            names = "--campaigns",
            defaultValue = "100",
            description = "Distinct campaigns (default: ${DEFAULT-VALUE}).")
    int campaigns;

    @Option(names = "--channels", defaultValue = "5", description = "Distinct channels (default: ${DEFAULT-VALUE}).")
    int channels;

    @Option(
            names = "--date",
            defaultValue = "2026-11-28",
            description = "The UTC day to generate (default: ${DEFAULT-VALUE}).")
    String date;

    @Option(
            names = "--lake",
            defaultValue = "target/bench-lake",
            description = "Where the generated lake goes (default: ${DEFAULT-VALUE}).")
    Path lake;

    @Option(
            names = "--runs",
            defaultValue = "2",
            description = "Timed runs; the first includes JIT warm-up (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--master", defaultValue = "local[2]", description = "Spark master (default: ${DEFAULT-VALUE}).")
    String master;

    @Option(
            names = "--conf",
            paramLabel = "KEY=VALUE",
            description = "Extra Spark settings, e.g. spark.sql.shuffle.partitions=32.")
    Map<String, String> conf = new HashMap<>();

    @Option(
            names = "--files-per-hour",
            defaultValue = "0",
            description = "Write about this many small files per hour, as a stream job does with one file per task and"
                    + " checkpoint (2 tasks, 10 s checkpoints: 720). 0: a few large files (default: ${DEFAULT-VALUE}).")
    int filesPerHour;

    @Option(
            names = "--compact",
            description = "Run `backfill compact` over the day before the timed runs, and time it.")
    boolean compact;

    @Option(
            names = "--archived-rows",
            defaultValue = "off",
            description = "What lake_archived_rows holds for the day before each timed run: off (nothing, so the lake"
                    + " check has nothing to compare and counts nothing), on (the lake's own rows per hour, as the"
                    + " stream records them: every run counts the day's lake hours and compares), alternate (even runs"
                    + " on, odd runs off; run 1 fills the schema) (default: ${DEFAULT-VALUE}).")
    String archivedRows;

    @Override
    public Integer call() throws Exception {
        Map<String, String> env = System.getenv();
        String jdbcUrl = require(env, "RECOUNT_JDBC_URL");
        String user = require(env, "PGUSER");
        String password = env.getOrDefault("PGPASSWORD", "");
        LocalDate day = LocalDate.parse(date);
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();

        // The session ./recount backfill would make (same local-mode defaults); --conf entries override them.
        System.setProperty("spark.ui.enabled", "false");
        conf.forEach(System::setProperty);
        SparkSession spark = SparkSessions.OWNED.open(BackfillSettings.from(RecountConfig.defaults()), master);
        try {
            Path lakeDir = lake.toAbsolutePath();
            long lakeRows = ensureLake(spark, lakeDir, day, from);

            String schema = "bench_" + Long.toString(ProcessHandle.current().pid(), 36);
            try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                    Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            Migrations.apply(jdbcUrl, user, password, schema);
            try (Connection c = DriverManager.getConnection(jdbcUrl, user, password)) {
                c.setSchema(schema);
                StreamProgressTable.advance(c, "bench", to, 1, "bench");
            }
            // The backfill logs in as the schema's batch login, as `./recount backfill` does.
            Path passwords = Files.createTempDirectory("recount-bench-secrets-");
            try (Connection c = DriverManager.getConnection(jdbcUrl, user, password)) {
                Logins.ensureLocal(c, schema, passwords);
            }
            Path config = Files.createTempFile("recount-bench-", ".properties");
            Files.writeString(
                    config,
                    "postgres.jdbc-url=" + jdbcUrl + "\npostgres.schema=" + schema + "\npostgres.password-dir="
                            + passwords + "\nlake.path=" + lakeDir + "\n");
            Map<String, String> runEnv = new HashMap<>();

            System.out.printf(
                    Locale.ROOT,
                    "lake: %s, %d rows (%d distinct events + duplicates), %d campaigns x %d channels%n",
                    lakeDir,
                    lakeRows,
                    events,
                    campaigns,
                    channels);
            SparkSessions shared = new SparkSessions() {
                @Override
                public SparkSession open(BackfillSettings settings, String masterOverride) {
                    return spark;
                }

                @Override
                public void release(SparkSession session) {}
            };
            System.out.printf(Locale.ROOT, "lake files: %d%n", countFiles(lakeDir));
            if (compact) {
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                long t0 = System.nanoTime();
                int exit = BackfillMain.execute(
                        new BackfillMain(runEnv, Clock.systemUTC(), shared, BackfillRunner.DEFAULT_DRIVER_MAX_ROWS),
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        "compact",
                        "--date",
                        day.toString(),
                        "--config",
                        config.toString());
                if (exit != 0) {
                    System.err.println("compact failed (exit " + exit + "): "
                            + err.toString().strip());
                    return exit;
                }
                System.out.printf(
                        Locale.ROOT,
                        "compact: %.1f s wall | %s | lake files now: %d%n",
                        (System.nanoTime() - t0) / 1e9,
                        out.toString().strip(),
                        countFiles(lakeDir));
            }
            SortedMap<Long, Long> hourRows = archivedRows.equals("off")
                    ? new TreeMap<>()
                    : new LakeReader(spark, lakeDir.toString()).rowsByHour(List.of(new TimeRange(from, to)));
            for (int i = 1; i <= runs; i++) {
                boolean checked = archivedRows.equals("on") || (archivedRows.equals("alternate") && i % 2 == 0);
                try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                        Statement s = c.createStatement()) {
                    c.setSchema(schema);
                    s.execute("DELETE FROM " + LakeArchivedRowsTable.TABLE);
                    if (checked) LakeArchivedRowsTable.record(c, UUID.randomUUID(), hourRows);
                }
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                long t0 = System.nanoTime();
                int exit = BackfillMain.execute(
                        new BackfillMain(runEnv, Clock.systemUTC(), shared, BackfillRunner.DEFAULT_DRIVER_MAX_ROWS),
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        "range",
                        "--from",
                        Instant.ofEpochMilli(from).toString(),
                        "--to",
                        Instant.ofEpochMilli(to).toString(),
                        "--config",
                        config.toString());
                double seconds = (System.nanoTime() - t0) / 1e9;
                if (exit != 0) {
                    System.err.println("run " + i + " failed (exit " + exit + "): "
                            + err.toString().strip());
                    return exit;
                }
                System.out.printf(
                        Locale.ROOT,
                        "run %d: %.1f s wall, %.0f lake rows/s, %.0f events/s, lake check %s | %s | %s%n",
                        i,
                        seconds,
                        lakeRows / seconds,
                        events / seconds,
                        checked ? "on" : "off",
                        out.toString().strip(),
                        phases(jdbcUrl, user, password, schema));
            }
            try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                    Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
            return 0;
        } finally {
            spark.stop();
        }
    }

    /** Writes the day's lake unless one with the requested row count is already there. */
    private long ensureLake(SparkSession spark, Path lakeDir, LocalDate day, long dayStart) throws Exception {
        long copies = Math.round(events * duplicateShare);
        long wanted = events + copies;
        Path marker = lakeDir.resolve("_bench_" + day + "_" + events + "_" + copies + "_" + campaigns + "x" + channels
                + (filesPerHour > 0 ? "_" + filesPerHour + "fph" : ""));
        if (Files.exists(marker)) return wanted;

        System.out.printf(
                Locale.ROOT,
                "generating %d events (+%d duplicates) for %s into %s ...%n",
                events,
                copies,
                day,
                lakeDir);
        long t0 = System.nanoTime();
        Dataset<Row> base = spark.range(events).toDF("id");
        Column id = col("id");
        Column ts = lit(dayStart).plus(pmod(hash(id, lit(1)), lit(86_400_000)));
        Column typeDraw = pmod(hash(id, lit(2)), lit(100));
        Dataset<Row> distinct = base.select(
                concat(lit("evt-"), id.cast("string")).as(LakeLayout.EVENT_ID),
                when(typeDraw.lt(90), lit("impression"))
                        .when(typeDraw.lt(99), lit("click"))
                        .otherwise(lit("conversion"))
                        .as(LakeLayout.EVENT_TYPE),
                ts.cast("long").as(LakeLayout.EVENT_TS),
                concat(lit("campaign-"), pmod(hash(id, lit(3)), lit(campaigns)).cast("string"))
                        .as(LakeLayout.CAMPAIGN_ID),
                concat(lit("channel-"), pmod(hash(id, lit(4)), lit(channels)).cast("string"))
                        .as(LakeLayout.CHANNEL_ID),
                pmod(hash(id, lit(5)), lit(2_000_000)).cast("long").as(LakeLayout.COST_MICROS),
                lit("ad-events").as(LakeLayout.KAFKA_TOPIC),
                pmod(id, lit(3)).cast("int").as(LakeLayout.KAFKA_PARTITION),
                id.as(LakeLayout.KAFKA_OFFSET),
                ts.plus(pmod(hash(id, lit(6)), lit(60_000))).cast("long").as(LakeLayout.RECORD_TS));
        // Duplicates: the same events read again at later offsets (a producer retry / replay).
        Dataset<Row> duplicates = distinct.limit((int) Math.min(copies, Integer.MAX_VALUE))
                .withColumn(
                        LakeLayout.KAFKA_OFFSET, col(LakeLayout.KAFKA_OFFSET).plus(events));
        Dataset<Row> all = distinct.unionByName(duplicates)
                .withColumn(
                        LakeLayout.DATE_PARTITION,
                        date_format(timestamp_millis(col(LakeLayout.EVENT_TS)), "yyyy-MM-dd"))
                .withColumn(LakeLayout.HOUR_PARTITION, date_format(timestamp_millis(col(LakeLayout.EVENT_TS)), "HH"));
        // Large files: one task per hour or two. Small files: one task per (hour, bucket), as a stream job writes one
        // file per task and checkpoint.
        Dataset<Row> placed = filesPerHour > 0
                ? all.repartition(
                        24 * filesPerHour,
                        col(LakeLayout.DATE_PARTITION),
                        col(LakeLayout.HOUR_PARTITION),
                        pmod(hash(col(LakeLayout.EVENT_ID), lit(7)), lit(filesPerHour)))
                : all.repartition(48, col(LakeLayout.DATE_PARTITION), col(LakeLayout.HOUR_PARTITION));
        placed.write()
                .mode(SaveMode.Overwrite)
                .partitionBy(LakeLayout.DATE_PARTITION, LakeLayout.HOUR_PARTITION)
                .parquet(lakeDir.toString());
        Files.createFile(marker);
        System.out.printf(Locale.ROOT, "generated in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        return wanted;
    }

    /** Data files in the lake (what a reader opens), bookkeeping under _recount/ and markers excluded. */
    private static long countFiles(Path lakeDir) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = Files.walk(lakeDir)) {
            return files.filter(Files::isRegularFile)
                    .filter(p -> p.getFileName().toString().endsWith(".parquet"))
                    .filter(p -> !lakeDir.relativize(p).toString().startsWith("_"))
                    .count();
        }
    }

    /** The phase timings the run recorded in batch_runs.details. */
    private static String phases(String jdbcUrl, String user, String password, String schema) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                Statement s = c.createStatement();
                var rs = s.executeQuery(
                        "SELECT details->>'compute_ms', details->>'stage_ms', details->>'replace_ms' FROM " + schema
                                + ".batch_runs ORDER BY run_id DESC LIMIT 1")) {
            rs.next();
            return "compute " + rs.getString(1) + " ms, staging " + rs.getString(2) + " ms, replace " + rs.getString(3)
                    + " ms";
        }
    }

    private static String require(Map<String, String> env, String name) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(
                    name + " is not set: run `./recount up` and `. .recount/local.env` first");
        }
        return v;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BatchRecomputeBench()).execute(args));
    }
}
