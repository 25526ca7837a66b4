package dev.recount.batch;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.date_format;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.timestamp_millis;
import static org.apache.spark.sql.functions.when;

import dev.recount.batch.WindowAggregation.Plan;
import dev.recount.batch.WindowAggregation.SetScope;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Not a test: the measurement behind {@link WindowAggregation#DEFAULT_PLAN}. One day of generated events (1 % sent
 * twice, half with attributes) in the lake's layout, read by {@link LakeReader}; each variant recomputes and then, per
 * set, sums its rows (what a run's totals do) and counts the rows it stores. Run it alone, on a quiet machine:
 *
 * <pre>
 * mvn -o -B -pl core,db,testkit,batch-backfill test -Dtest=WindowAggregationPlanTiming \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Drecount.timing=true [-Drecount.timing.events=2000000]
 * </pre>
 */
@EnabledIfSystemProperty(named = "recount.timing", matches = "true")
class WindowAggregationPlanTiming {
    private static final long DAY = Instant.parse("2026-11-28T00:00:00Z").toEpochMilli();
    private static final long DAY_MILLIS = 86_400_000L;

    @Test
    void oneScanPerSetAgainstOneScanForAllSets() throws Exception {
        long events = Long.getLong("recount.timing.events", 2_000_000);
        SparkSession spark = SharedSpark.session();
        spark.conf().set("spark.sql.shuffle.partitions", "16");
        Path lake = Path.of(System.getProperty("recount.timing.lake", "target/timing-lake-" + events));
        if (!Files.exists(lake)) generate(spark, events, lake);
        MetricSets three = TestSets.parse(TestSets.THREE_SETS);
        MetricSet defaultSet = three.defaultSet().orElseThrow();
        TimeRange day = new TimeRange(DAY, DAY + DAY_MILLIS);
        Dataset<Row> rows = new LakeReader(spark, lake.toString()).read(List.of(day));
        // Warm-up: the first job pays for class loading and the page cache.
        time(rows, List.of(defaultSet), three, Plan.ONE_SCAN_PER_SET);
        // The machine is shared: the process's CPU seconds (Spark runs in it) say what a variant costs better than
        // the wall clock does, which other processes stretch. Rounds alternate the order.
        for (int round = 1; round <= 4; round++) {
            boolean perSetFirst = round % 2 == 1;
            double[] one = time(rows, List.of(defaultSet), three, Plan.ONE_SCAN_PER_SET);
            double[] perSet = perSetFirst ? time(rows, three.sets(), three, Plan.ONE_SCAN_PER_SET) : null;
            double[] all = time(rows, three.sets(), three, Plan.ONE_SCAN_ALL_SETS);
            if (perSet == null) perSet = time(rows, three.sets(), three, Plan.ONE_SCAN_PER_SET);
            System.out.printf(
                    "round %d, %d events (wall s / CPU s): 1 set %.1f / %.1f; 3 sets, one scan per set %.1f / %.1f;"
                            + " 3 sets, one scan for all %.1f / %.1f%n",
                    round, events, one[0], one[1], perSet[0], perSet[1], all[0], all[1]);
        }
    }

    /** Wall and process CPU seconds of one recompute of {@code sets}, its totals and stored rows counted. */
    private static double[] time(Dataset<Row> rows, List<MetricSet> sets, MetricSets definitions, Plan plan) {
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        try (WindowAggregation.Recomputed r = WindowAggregation.recompute(
                rows,
                SetScope.allOf(sets),
                definitions.attributes(),
                plan,
                org.apache.spark.sql.functions::xxhash64,
                WindowAggregation.MAX_BROADCAST_HASHES)) {
            for (MetricSet set : sets) {
                r.rows(set)
                        .agg(
                                coalesce(sum(col(Measure.EVENTS)), lit(0L)),
                                coalesce(sum(col(WindowAggregation.LAKE_ROWS)), lit(0L)),
                                coalesce(sum(col(WindowAggregation.LEFT_OUT)), lit(0L)))
                        .collectAsList();
                r.stored(set).count();
            }
        }
        return new double[] {(System.nanoTime() - t0) / 1e9, (os.getProcessCpuTime() - cpu0) / 1e9};
    }

    /** {@code events} events over one day, 100 campaigns x 5 channels, every 100th sent twice; half with attributes. */
    private static void generate(SparkSession spark, long events, Path lake) {
        Column id = col("id");
        Column ts = lit(DAY).plus(pmod(id.multiply(7_919L), lit(DAY_MILLIS)));
        Column type = when(pmod(id, lit(10)).lt(7), lit("impression"))
                .when(pmod(id, lit(10)).lt(9), lit("click"))
                .otherwise(lit("conversion"));
        Column attributes = when(pmod(id, lit(2)).equalTo(0), lit(null).cast("string"))
                .otherwise(concat(
                        lit("{\"slot_id\":\"s"),
                        pmod(id, lit(20)).cast("string"),
                        lit("\",\"country\":\""),
                        when(pmod(id, lit(3)).equalTo(0), lit("DE")).otherwise(lit("FR")),
                        lit("\",\"quantity\":"),
                        pmod(id, lit(5)).cast("string"),
                        lit("}")));
        Dataset<Row> one = spark.range(events)
                .select(
                        concat(lit("e"), id.cast("string")).as(LakeLayout.EVENT_ID),
                        type.as(LakeLayout.EVENT_TYPE),
                        ts.as(LakeLayout.EVENT_TS),
                        concat(lit("c"), pmod(id, lit(100)).cast("string")).as(LakeLayout.CAMPAIGN_ID),
                        concat(lit("ch"), pmod(id, lit(5)).cast("string")).as(LakeLayout.CHANNEL_ID),
                        pmod(id.multiply(31L), lit(100_000L)).as(LakeLayout.COST_MICROS),
                        lit("ad-events").as(LakeLayout.KAFKA_TOPIC),
                        pmod(id, lit(4)).cast("int").as(LakeLayout.KAFKA_PARTITION),
                        id.as(LakeLayout.KAFKA_OFFSET),
                        ts.as(LakeLayout.RECORD_TS),
                        lit(null).cast("string").as(LakeLayout.REQUEST_ID),
                        attributes.as(LakeLayout.ATTRIBUTES));
        Dataset<Row> copies = one.filter(
                        pmod(col(LakeLayout.KAFKA_OFFSET), lit(100)).equalTo(0))
                .withColumn(
                        LakeLayout.KAFKA_OFFSET, col(LakeLayout.KAFKA_OFFSET).plus(events));
        Column time = timestamp_millis(col(LakeLayout.EVENT_TS));
        one.unionByName(copies)
                .withColumn(LakeLayout.DATE_PARTITION, date_format(time, "yyyy-MM-dd"))
                .withColumn(LakeLayout.HOUR_PARTITION, date_format(time, "HH"))
                .repartition(col(LakeLayout.DATE_PARTITION), col(LakeLayout.HOUR_PARTITION))
                .write()
                .mode(SaveMode.ErrorIfExists)
                .partitionBy(LakeLayout.DATE_PARTITION, LakeLayout.HOUR_PARTITION)
                .parquet(lake.toString());
    }
}
