package dev.recount.bench;

import dev.recount.core.sets.Measure;
import dev.recount.core.window.WindowAlignment;
import java.util.ArrayList;
import java.util.List;

/**
 * The window metrics as SQL select items, built from the default set's {@link Measure#sqlContribution} ({@link DefaultSet}) so that Flink SQL,
 * DuckDB and Spark SQL sum exactly what the shipped jobs sum (no second copy of the definitions).
 */
final class WindowSql {
    private WindowSql() {}

    /** The window start of {@code event_ts}, as the shipped batch layer computes it. */
    static String windowStart(long windowMillis) {
        return new WindowAlignment(windowMillis).sqlWindowStart("event_ts");
    }

    /** {@code SUM(<contribution>) AS impressions, ...} over columns {@code event_type} and {@code cost_micros}. */
    static String metricSums() {
        List<String> items = new ArrayList<>();
        for (Measure m : DefaultSet.SET.measures()) {
            items.add("SUM(" + DefaultSet.sqlContribution(m, m.sqlType()) + ") AS " + m.name());
        }
        return String.join(", ", items);
    }

    /**
     * The batch recompute over lake rows in {@code source} (a table expression), as the batch layer computed it
     * before it shipped {@link #candidatesOnly}: every row ranked among its id's copies. One row per event_id, the copy
     * with the lowest (kafka_topic, kafka_partition, kafka_offset), then summed per (window_start, campaign,
     * channel). Window start: core's {@link WindowAlignment#sqlWindowStart}, the text WindowAggregation runs. Standard
     * SQL that both DuckDB and Spark SQL accept.
     */
    static String rankEveryRow(String source, long fromMillis, long toMillis, long windowMillis) {
        return "WITH ranked AS (SELECT event_id, event_ts, event_type, campaign_id, channel_id, cost_micros, "
                + "ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY kafka_topic, kafka_partition, kafka_offset, event_ts, "
                + "event_type, campaign_id, channel_id, cost_micros) AS copy_rank, "
                + "COUNT(*) OVER (PARTITION BY event_id) AS lake_rows "
                + "FROM " + source + " WHERE event_ts >= " + fromMillis + " AND event_ts < " + toMillis + ") "
                + "SELECT " + windowStart(windowMillis) + " AS window_start, campaign_id, channel_id, "
                + metricSums() + ", SUM(lake_rows) AS lake_rows "
                + "FROM ranked WHERE copy_rank = 1 GROUP BY 1, 2, 3";
    }

    /**
     * The same result by the plan the batch layer ships (WindowAggregation.deduplicate): a 64-bit hash of every
     * event_id finds the ids that may have copies; rows whose hash occurs once pass straight through, the others
     * are ranked by a window among their id's copies. {@code hashFunction} is the engine's 64-bit hash
     * ({@code xxhash64} in Spark, {@code hash} in DuckDB): the only difference between the engines' texts.
     */
    static String candidatesOnly(
            String source, long fromMillis, long toMillis, long windowMillis, String hashFunction) {
        String columns = "event_id, event_ts, event_type, campaign_id, channel_id, cost_micros";
        return "WITH src AS (SELECT *, " + hashFunction + "(event_id) AS id_hash FROM " + source
                + " WHERE event_ts >= " + fromMillis + " AND event_ts < " + toMillis + "), "
                + "repeated AS (SELECT id_hash FROM src GROUP BY id_hash HAVING count(*) > 1), "
                + "single AS (SELECT " + columns + ", 1 AS lake_rows FROM src"
                + " WHERE NOT EXISTS (SELECT 1 FROM repeated r WHERE r.id_hash = src.id_hash)), "
                + "ranked AS (SELECT " + columns + ", ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY kafka_topic,"
                + " kafka_partition, kafka_offset, event_ts, event_type, campaign_id, channel_id, cost_micros) AS copy_rank,"
                + " COUNT(*) OVER (PARTITION BY event_id) AS lake_rows FROM src"
                + " WHERE EXISTS (SELECT 1 FROM repeated r WHERE r.id_hash = src.id_hash)), "
                + "deduplicated AS (SELECT * FROM single UNION ALL SELECT " + columns + ", lake_rows FROM ranked"
                + " WHERE copy_rank = 1) "
                + "SELECT " + windowStart(windowMillis) + " AS window_start, campaign_id, channel_id, "
                + metricSums() + ", SUM(lake_rows) AS lake_rows FROM deduplicated GROUP BY 1, 2, 3";
    }
}
