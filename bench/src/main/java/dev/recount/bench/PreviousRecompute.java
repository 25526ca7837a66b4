package dev.recount.bench;

import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.negate;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import dev.recount.batch.WindowAggregation;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Measure;
import dev.recount.core.window.WindowAlignment;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;

/**
 * {@code WindowAggregation.recompute} as it was before its sums were changed, kept to measure against: the same
 * de-duplication (repeated id hashes by a shuffle and sort, a broadcast semi-join for their rows), but spend summed
 * as DECIMAL(38,0) per row and the three terms (every row, minus the copies, plus the copy kept) aggregated apart,
 * then joined by a second aggregation.
 */
final class PreviousRecompute {
    private static final String H = "id_hash";

    private PreviousRecompute() {}

    /** count(*), sum(events), sum(lake_rows) of the window rows. */
    static Row totals(Dataset<Row> lakeRows, WindowAlignment windows) {
        Dataset<Row> repeated = lakeRows.select(
                        xxhash64(col(LakeLayout.EVENT_ID)).as(H))
                .repartition(col(H))
                .sortWithinPartitions(col(H))
                .mapPartitions(new SortedHashRecompute.RepeatedValues(), Encoders.LONG())
                .toDF(H)
                .persist(StorageLevel.MEMORY_AND_DISK());
        Dataset<Row> copies = null;
        try {
            repeated.count();
            Dataset<Row> lookup = broadcast(repeated);
            copies = lakeRows.join(
                            lookup, xxhash64(lakeRows.col(LakeLayout.EVENT_ID)).equalTo(lookup.col(H)), "left_semi")
                    .persist(StorageLevel.MEMORY_AND_DISK());
            Dataset<Row> everyRow = aggregate(asSingleCopies(lakeRows), windows);
            Dataset<Row> copyRows = aggregate(asSingleCopies(copies), windows);
            Dataset<Row> kept = aggregate(keepLowest(copies), windows);
            List<Column> negated = new ArrayList<>(keys());
            List<Column> sums = new ArrayList<>();
            for (String m : sumColumns()) {
                negated.add(negate(col(m)).as(m));
                sums.add(sum(col(m)).as(m));
            }
            Dataset<Row> rows = everyRow.unionByName(copyRows.select(negated.toArray(Column[]::new)))
                    .unionByName(kept)
                    .groupBy(keys().toArray(Column[]::new))
                    .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new))
                    .filter(col(Measure.EVENTS).gt(0));
            return rows.agg(count(lit(1)), sum(col("events")), sum(col(WindowAggregation.LAKE_ROWS)))
                    .first();
        } finally {
            if (copies != null) copies.unpersist();
            repeated.unpersist();
        }
    }

    /** The lake columns the default set's sums read, and the coordinates' tie-breakers. */
    private static final String[] PAYLOAD = {
        LakeLayout.EVENT_TS,
        LakeLayout.EVENT_TYPE,
        LakeLayout.CAMPAIGN_ID,
        LakeLayout.CHANNEL_ID,
        LakeLayout.COST_MICROS
    };

    /** Lake rows as events of one copy each, with {@code lake_rows} = 1. */
    static Dataset<Row> asSingleCopies(Dataset<Row> lakeRows) {
        List<Column> out = new ArrayList<>();
        for (String c : PAYLOAD) out.add(col(c));
        out.add(lit(1L).as(WindowAggregation.LAKE_ROWS));
        return lakeRows.select(out.toArray(Column[]::new));
    }

    /** Per {@code event_id}, its least copy by (coordinates, payload), with how many copies it had. */
    static Dataset<Row> keepLowest(Dataset<Row> copies) {
        List<Column> order = new ArrayList<>(
                List.of(col(LakeLayout.KAFKA_TOPIC), col(LakeLayout.KAFKA_PARTITION), col(LakeLayout.KAFKA_OFFSET)));
        List<Column> kept = new ArrayList<>();
        for (String c : PAYLOAD) {
            order.add(col(c));
            kept.add(col("kept." + c).as(c));
        }
        kept.add(col(WindowAggregation.LAKE_ROWS));
        return copies.groupBy(col(LakeLayout.EVENT_ID))
                .agg(
                        min(struct(order.toArray(Column[]::new))).as("kept"),
                        count(lit(1)).as(WindowAggregation.LAKE_ROWS))
                .select(kept.toArray(Column[]::new));
    }

    /** Events of one copy each summed per window key of the default set, each measure in its own SQL type. */
    static Dataset<Row> aggregate(Dataset<Row> events, WindowAlignment windows) {
        List<Column> sums = new ArrayList<>();
        for (Measure m : DefaultSet.SET.measures()) {
            sums.add(sum(expr(DefaultSet.sqlContribution(m, m.sqlType()))).as(m.name()));
        }
        sums.add(sum(col(WindowAggregation.LAKE_ROWS)).as(WindowAggregation.LAKE_ROWS));
        return events.groupBy(
                        WindowAggregation.windowStart(LakeLayout.EVENT_TS, windows)
                                .as(WindowAggregation.WINDOW_START),
                        col(LakeLayout.CAMPAIGN_ID),
                        col(LakeLayout.CHANNEL_ID))
                .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new));
    }

    private static List<Column> keys() {
        return List.of(col(WindowAggregation.WINDOW_START), col(LakeLayout.CAMPAIGN_ID), col(LakeLayout.CHANNEL_ID));
    }

    private static List<String> sumColumns() {
        List<String> names = new ArrayList<>();
        names.addAll(DefaultSet.SET.measureNames());
        names.add(WindowAggregation.LAKE_ROWS);
        return names;
    }
}
