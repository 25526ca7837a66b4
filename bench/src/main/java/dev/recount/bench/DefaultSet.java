package dev.recount.bench;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;

/**
 * The default metric set (campaign x channel; impressions, clicks, conversions, spend_micros, events), which every
 * peer engine of the benchmarks computes: its measures come from core's definition (default-set.yaml), so the Flink
 * SQL, Kafka Streams, Spark SQL and DuckDB peers sum exactly what the shipped jobs sum.
 */
public final class DefaultSet {
    public static final MetricSet SET = MetricSets.defaults().defaultSet().orElseThrow();

    private DefaultSet() {}

    /**
     * What one event adds to {@code measure}, as SQL over lake or event columns of the fields' own names
     * ({@code event_type}, {@code cost_micros}), with standard SQL string literals (the default set's filter values
     * hold no quote or backslash, so DuckDB, Spark SQL and Flink SQL read them alike).
     */
    public static String sqlContribution(Measure measure, String sqlType) {
        return measure.sqlContribution(column -> column, value -> "'" + value.replace("'", "''") + "'", sqlType);
    }
}
