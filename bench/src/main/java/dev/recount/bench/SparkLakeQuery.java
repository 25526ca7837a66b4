package dev.recount.bench;

import dev.recount.batch.BackfillSettings;
import dev.recount.batch.LakeReader;
import dev.recount.batch.SparkSessions;
import dev.recount.batch.TimeRange;
import dev.recount.batch.WindowAggregation;
import dev.recount.core.config.RecountConfig;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Batch, Spark side, over one day of the lake in the session recount's batch layer makes ({@link SparkSessions#OWNED}:
 * ANSI mode, its local-mode settings), three ways, alternating, {@code rounds} times:
 * <ul>
 *   <li>{@code recount}: the batch layer's own plan — {@link LakeReader} and {@link WindowAggregation}, exactly what
 *       {@code backfill range} computes before staging;</li>
 *   <li>{@code sql-rank} / {@code sql-candidates}: the query texts DuckDbLakeQuery runs too ({@link WindowSql}), in
 *       Spark SQL over the same files (partition discovery pruned to the day).</li>
 * </ul>
 * Runs on batch-backfill's runtime classpath (Spark and batch-backfill are `provided` here). Args: lake date [rounds]
 * [master]. Prints {@code RESULT spark-<variant> <round> <lakeRows> <seconds>} per run.
 */
public final class SparkLakeQuery {
    public static void main(String[] args) {
        String lake = args[0];
        LocalDate day = LocalDate.parse(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String master = args.length > 3 ? args[3] : "local[2]";
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        System.setProperty("spark.ui.enabled", "false");
        SparkSession spark = SparkSessions.OWNED.open(BackfillSettings.from(RecountConfig.defaults()), master);
        spark.sparkContext().setLogLevel("WARN");
        try {
            spark.read().parquet(lake).where("event_date = '" + day + "'").createOrReplaceTempView("lake_day");
            for (int round = 1; round <= rounds; round++) {
                for (String variant : List.of("recount", "sql-rank", "sql-candidates")) {
                    long t0 = System.nanoTime();
                    Row r;
                    switch (variant) {
                        case "recount" -> {
                            try (WindowAggregation.Recomputed windows =
                                    recount(new LakeReader(spark, lake).read(List.of(new TimeRange(from, to))))) {
                                r = totals(storedRows(windows));
                            }
                        }
                        case "sql-rank" -> r = totals(spark.sql(WindowSql.rankEveryRow("lake_day", from, to, 60_000)));
                        default ->
                            r = totals(spark.sql(WindowSql.candidatesOnly("lake_day", from, to, 60_000, "xxhash64")));
                    }
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    System.out.printf(
                            Locale.ROOT,
                            "spark %s round %d: %d window keys, %d events, %d lake rows in %.2f s%n",
                            variant,
                            round,
                            r.getLong(0),
                            r.getLong(1),
                            r.getLong(2),
                            seconds);
                    System.out.printf(
                            Locale.ROOT, "RESULT spark-%s %d %d %.2f%n", variant, round, r.getLong(2), seconds);
                }
            }
        } finally {
            spark.stop();
        }
    }

    /** The batch layer's recompute of the default set (whose window is one minute) over {@code lakeRows}. */
    static WindowAggregation.Recomputed recount(Dataset<Row> lakeRows) {
        return WindowAggregation.recompute(
                lakeRows, List.of(WindowAggregation.SetScope.all(DefaultSet.SET)), List.of());
    }

    /**
     * The default set's stored rows in the columns the benchmarks' other plans give: window_start, the dimensions,
     * the measures, lake_rows (the column of events left out for an invalid attribute is not one: the set reads none).
     */
    static Dataset<Row> storedRows(WindowAggregation.Recomputed windows) {
        List<String> columns = new ArrayList<>(List.of(WindowAggregation.WINDOW_START));
        columns.addAll(DefaultSet.SET.dimensionNames());
        columns.addAll(DefaultSet.SET.measureNames());
        columns.add(WindowAggregation.LAKE_ROWS);
        return windows.stored(DefaultSet.SET).selectExpr(columns.toArray(String[]::new));
    }

    private static Row totals(Dataset<Row> windows) {
        windows.createOrReplaceTempView("windows");
        return windows.sparkSession()
                .sql("SELECT count(*), sum(events), sum(lake_rows) FROM windows")
                .first();
    }
}
