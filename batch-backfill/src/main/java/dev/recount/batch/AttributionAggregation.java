package dev.recount.batch;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.EventType;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Attribution ({@link AttributionRule}) recomputed exactly from lake rows, per window of the click or conversion and
 * value of a metric set's dimensions (those of the click), for every set with attribution on.
 *
 * <p>The caller reads the lake for {@code [from - window, to)} ({@link #lookback}): every impression that can
 * attribute a click in {@code [from, to)} lies in it. Then, once for every set ({@link #judged}):
 * <ol>
 *   <li>clicks and conversions in {@code [from, to)}, each {@code event_id} once — the copy with the lowest
 *       {@code (kafka_topic, kafka_partition, kafka_offset)}, as {@link WindowAggregation} keeps;</li>
 *   <li>impressions with a request id, as distinct {@code (request_id, event_ts)} pairs: copies of an impression
 *       share both, and "an impression exists in the window" does not care how many there are;</li>
 *   <li>a click is attributed when a left-semi join on {@code request_id} and core's
 *       {@link AttributionRule#sqlCondition} finds one (each click once, however many match); the others
 *       (left-anti, which includes every click without a request id) are unattributed;</li>
 * </ol>
 * and per set ({@link #perKey}): summed per key into {@link AttributionMetrics#COLUMNS}, exact (BIGINT counts,
 * DECIMAL(38,0) spend, ANSI mode); keys where every metric is zero (only unattributed conversions) are dropped, as the
 * stream never writes them. A click whose value of an attribute the set reads is invalid is left out of that set, as
 * of its window metrics.
 */
public final class AttributionAggregation {
    private static final String IMPRESSION_REQUEST = "impression_request_id";
    private static final String IMPRESSION_TS = "impression_ts";
    private static final String ATTRIBUTED = "attributed";
    private static final String KEPT = "kept";

    private AttributionAggregation() {}

    /** The range to read from the lake for {@code range}: from one attribution window before it, to its end. */
    public static TimeRange lookback(TimeRange range, AttributionRule rule) {
        return new TimeRange(rule.earliestImpressionTs(range.fromMillis()), range.toMillis());
    }

    /**
     * The clicks and conversions in {@code [fromMillis, toMillis)}, each once, with their fields and whether an
     * impression attributes them (the column {@code attributed}).
     *
     * @param lakeRows lake rows (file columns, copies included) with event_ts in {@link #lookback} of the range
     */
    public static Dataset<Row> judged(Dataset<Row> lakeRows, AttributionRule rule, long fromMillis, long toMillis) {
        WindowAggregation.requireAnsiMode(lakeRows.sparkSession());
        Column inRange = col(LakeLayout.EVENT_TS)
                .geq(fromMillis)
                .and(col(LakeLayout.EVENT_TS).lt(toMillis));
        Column attributable =
                col(LakeLayout.EVENT_TYPE).isin(EventType.CLICK.wireName(), EventType.CONVERSION.wireName());
        Dataset<Row> clicks = keepLowest(lakeRows.filter(inRange.and(attributable)));
        Dataset<Row> impressions = lakeRows.filter(col(LakeLayout.EVENT_TYPE)
                        .equalTo(EventType.IMPRESSION.wireName())
                        .and(col(LakeLayout.REQUEST_ID).isNotNull()))
                .select(
                        col(LakeLayout.REQUEST_ID).as(IMPRESSION_REQUEST),
                        col(LakeLayout.EVENT_TS).as(IMPRESSION_TS))
                .distinct();
        Column match = clicks.col(LakeLayout.REQUEST_ID)
                .equalTo(impressions.col(IMPRESSION_REQUEST))
                .and(expr(rule.sqlCondition(IMPRESSION_TS, LakeLayout.EVENT_TS)));
        return clicks.join(impressions, match, "left_semi")
                .withColumn(ATTRIBUTED, lit(true))
                .unionByName(clicks.join(impressions, match, "left_anti").withColumn(ATTRIBUTED, lit(false)));
    }

    /**
     * {@link #judged} clicks and conversions summed per window key of {@code set}: window_start (epoch ms), the set's
     * dimensions by name and {@link AttributionMetrics#COLUMNS}.
     *
     * @param declared the declared attributes, for a set whose dimensions are attributes
     */
    public static Dataset<Row> perKey(Dataset<Row> judged, MetricSet set, List<Attribute> declared) {
        LakeSetColumns columns = new LakeSetColumns(set);
        Dataset<Row> clicks = DeclaredAttributes.usedBy(List.of(set), declared).addTo(judged);
        if (columns.usesAttributes()) clicks = clicks.filter(columns.valid());
        List<Column> key = new ArrayList<>();
        key.add(columns.windowStart().as(WindowAggregation.WINDOW_START));
        for (int d = 0; d < set.dimensions().size(); d++) {
            key.add(columns.dimension(d).as(set.dimensions().get(d).name()));
        }
        String spendType = Measure.SUM_SQL_TYPE;
        Column isClick = col(LakeLayout.EVENT_TYPE).equalTo(EventType.CLICK.wireName());
        Column isConversion = col(LakeLayout.EVENT_TYPE).equalTo(EventType.CONVERSION.wireName());
        Column attributed = col(ATTRIBUTED);
        Dataset<Row> sums = clicks.groupBy(key.toArray(Column[]::new))
                .agg(
                        sum(when(isClick.and(attributed), 1L).otherwise(0L)).as(AttributionMetrics.COLUMNS[0]),
                        sum(when(isConversion.and(attributed), 1L).otherwise(0L))
                                .as(AttributionMetrics.COLUMNS[1]),
                        sum(when(isClick.and(attributed.unary_$bang()), 1L).otherwise(0L))
                                .as(AttributionMetrics.COLUMNS[2]),
                        sum(when(attributed, col(LakeLayout.COST_MICROS).cast(spendType))
                                        .otherwise(lit(0).cast(spendType)))
                                .cast(spendType)
                                .as(AttributionMetrics.COLUMNS[3]));
        return sums.filter(col(AttributionMetrics.COLUMNS[0])
                .gt(0)
                .or(col(AttributionMetrics.COLUMNS[1]).gt(0))
                .or(col(AttributionMetrics.COLUMNS[2]).gt(0)));
    }

    /** Per event_id, its least copy by (coordinates, payload), as WindowAggregation keeps. */
    private static Dataset<Row> keepLowest(Dataset<Row> rows) {
        String[] payload = {
            LakeLayout.EVENT_TS,
            LakeLayout.EVENT_TYPE,
            LakeLayout.CAMPAIGN_ID,
            LakeLayout.CHANNEL_ID,
            LakeLayout.COST_MICROS,
            LakeLayout.REQUEST_ID,
            LakeLayout.ATTRIBUTES
        };
        Column[] fields = new Column[3 + payload.length];
        fields[0] = col(LakeLayout.KAFKA_TOPIC);
        fields[1] = col(LakeLayout.KAFKA_PARTITION);
        fields[2] = col(LakeLayout.KAFKA_OFFSET);
        for (int i = 0; i < payload.length; i++) fields[3 + i] = col(payload[i]);
        Column[] kept = new Column[payload.length];
        for (int i = 0; i < payload.length; i++)
            kept[i] = col(KEPT + "." + payload[i]).as(payload[i]);
        return rows.groupBy(col(LakeLayout.EVENT_ID))
                .agg(min(struct(fields)).as(KEPT))
                .select(kept);
    }
}
