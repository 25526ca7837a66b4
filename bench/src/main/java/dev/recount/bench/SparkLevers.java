package dev.recount.bench;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.row_number;

import dev.recount.batch.BackfillSettings;
import dev.recount.batch.LakeReader;
import dev.recount.batch.SparkSessions;
import dev.recount.batch.TimeRange;
import dev.recount.batch.WindowAggregation;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.window.WindowAlignment;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.expressions.WindowSpec;

/**
 * Measures the batch layer's levers one at a time: each variant is a plan plus Spark SQL settings, run over one day
 * of the lake in recount's own session ({@link SparkSessions#OWNED}), all variants alternating, {@code rounds} times.
 * A variant is {@code plan[@key=value...]}; plans: {@code recount} (LakeReader + WindowAggregation as shipped),
 * {@code previous} (the same de-duplication with the sums of the plan before: DECIMAL(38,0) spend per row and the
 * three terms aggregated apart, {@link PreviousRecompute}) and {@code before} (the de-duplication before that:
 * every row ranked among its id's copies by a window). Settings that
 * need a new session (shuffle compression, serializer) are given as {@code -Dspark.*} to separate runs by
 * bench/run.sh. {@code sort} is recount's plan before its repeated id hashes were found by bucketed arrays
 * and its whole-lake sums were aggregated apart from the corrections ({@link SortedHashRecompute}). Args: lake date rounds variant,variant,... Prints
 * {@code RESULT <variant> <round> <seconds>}, with the window rows' checksum (bit_xor of xxhash64 over every
 * column of every row) where the plan gives its rows, and, per stage of the run, {@code STAGE} lines ({@link StageTimes}).
 */
public final class SparkLevers {
    public static void main(String[] args) throws Exception {
        String lake = args[0];
        LocalDate day = LocalDate.parse(args[1]);
        int rounds = Integer.parseInt(args[2]);
        List<String> variants = List.of(args[3].split(","));
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        TimeRange range = new TimeRange(
                from, day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli());
        System.setProperty("spark.ui.enabled", "false");
        SparkSession spark = SparkSessions.OWNED.open(BackfillSettings.from(RecountConfig.defaults()), "local[2]");
        spark.sparkContext().setLogLevel("WARN");
        StageTimes stages = new StageTimes();
        spark.sparkContext().addSparkListener(stages);
        WindowAlignment minute = new WindowAlignment(60_000);
        Map<String, String> initial = new LinkedHashMap<>();
        for (String v : variants)
            settings(v)
                    .keySet()
                    .forEach(k -> initial.putIfAbsent(k, spark.conf().get(k, null)));
        try {
            for (int round = 1; round <= rounds; round++) {
                for (String variant : variants) {
                    initial.forEach((k, v) -> {
                        if (v == null) spark.conf().unset(k);
                        else spark.conf().set(k, v);
                    });
                    settings(variant).forEach((k, v) -> spark.conf().set(k, v));
                    stages.clear();
                    long t0 = System.nanoTime();
                    Dataset<Row> lakeRows = new LakeReader(spark, lake).read(List.of(range));
                    Row r;
                    if (variant.startsWith("before")) {
                        r = totals(PreviousRecompute.aggregate(rankEveryRow(lakeRows), minute));
                    } else if (variant.startsWith("sort")) {
                        r = SortedHashRecompute.totals(lakeRows, minute);
                    } else if (variant.startsWith("previous")) {
                        r = PreviousRecompute.totals(lakeRows, minute);
                    } else {
                        try (WindowAggregation.Recomputed windows = SparkLakeQuery.recount(lakeRows)) {
                            r = totals(SparkLakeQuery.storedRows(windows));
                        }
                    }
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    System.out.printf(
                            Locale.ROOT,
                            "%s round %d: %d window keys, %d events, %d lake rows, checksum %s in %.2f s%n",
                            variant,
                            round,
                            r.getLong(0),
                            r.getLong(1),
                            r.getLong(2),
                            r.size() > 3 ? Long.toHexString(r.getLong(3)) : "-",
                            seconds);
                    System.out.printf(Locale.ROOT, "RESULT %s %d %.2f%n", variant, round, seconds);
                    // Stage events reach listeners asynchronously: let them all arrive first (Spark-internal API).
                    spark.sparkContext().listenerBus().waitUntilEmpty();
                    stages.print(variant, round);
                }
            }
        } finally {
            spark.stop();
        }
    }

    private static Map<String, String> settings(String variant) {
        Map<String, String> s = new LinkedHashMap<>();
        String[] parts = variant.split("@");
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            s.put(kv[0], kv[1]);
        }
        return s;
    }

    /** The batch layer's de-duplication before the candidate plan, kept here to measure against. */
    static Dataset<Row> rankEveryRow(Dataset<Row> lakeRows) {
        WindowSpec byEvent = Window.partitionBy(col(LakeLayout.EVENT_ID));
        List<String> order = new ArrayList<>(List.of(
                LakeLayout.KAFKA_TOPIC,
                LakeLayout.KAFKA_PARTITION,
                LakeLayout.KAFKA_OFFSET,
                LakeLayout.EVENT_TS,
                LakeLayout.EVENT_TYPE,
                LakeLayout.CAMPAIGN_ID,
                LakeLayout.CHANNEL_ID,
                LakeLayout.COST_MICROS));
        return lakeRows.withColumn(
                        "copy_rank",
                        row_number()
                                .over(byEvent.orderBy(
                                        order.stream().map(c -> col(c)).toArray(org.apache.spark.sql.Column[]::new))))
                .withColumn(WindowAggregation.LAKE_ROWS, count(lit(1)).over(byEvent))
                .filter(col("copy_rank").equalTo(1))
                .select(
                        col(LakeLayout.EVENT_ID),
                        col(LakeLayout.EVENT_TS),
                        col(LakeLayout.EVENT_TYPE),
                        col(LakeLayout.CAMPAIGN_ID),
                        col(LakeLayout.CHANNEL_ID),
                        col(LakeLayout.COST_MICROS),
                        col(WindowAggregation.LAKE_ROWS));
    }

    private static Row totals(Dataset<Row> windows) {
        windows.createOrReplaceTempView("windows");
        return windows.sparkSession()
                .sql("SELECT count(*), sum(events), sum(lake_rows), bit_xor(xxhash64(*)) FROM windows")
                .first();
    }
}
