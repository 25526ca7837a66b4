package dev.recount.bench;

import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Batch, Spark side: the same query text as DuckDbLakeQuery (WindowSql.batchRecompute) in Spark SQL over the same
 * Parquet files (partition discovery = hive partitioning, pruned to the day), local[2]. Runs on batch-backfill's
 * runtime classpath (Spark is `provided` here). Args: lake date [runs] [master].
 * Prints {@code RESULT spark <lakeRows> <seconds>} per run.
 */
public final class SparkLakeQuery {
    public static void main(String[] args) {
        String lake = args[0];
        LocalDate day = LocalDate.parse(args[1]);
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        String master = args.length > 3 ? args[3] : "local[2]";
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        SparkSession spark = SparkSession.builder().master(master).appName("bench-spark-lake-query")
                .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "8")
                .config("spark.sql.session.timeZone", "UTC")
                // As the batch layer: an overflowing sum is an error, not a wrapped number.
                .config("spark.sql.ansi.enabled", "true").getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        try {
            spark.read().parquet(lake).where("event_date = '" + day + "'").createOrReplaceTempView("lake_day");
            for (int run = 1; run <= runs; run++) {
                long t0 = System.nanoTime();
                Row r = spark.sql("SELECT count(*), sum(events), sum(lake_rows) FROM ("
                        + WindowSql.batchRecompute("lake_day", from, to, 60_000) + ") q").first();
                double seconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf(Locale.ROOT, "spark run %d: %d window keys, %d events, %d lake rows in %.2f s%n",
                        run, r.getLong(0), r.getLong(1), r.getLong(2), seconds);
                System.out.printf(Locale.ROOT, "RESULT spark %d %.2f%n", r.getLong(2), seconds);
            }
        } finally {
            spark.stop();
        }
    }
}
