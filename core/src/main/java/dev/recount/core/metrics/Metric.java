package dev.recount.core.metrics;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.util.Locale;

/**
 * The window metrics of CONTRACT §2, each defined once as "what one valid event contributes". The Flink
 * aggregate sums {@link #contribution(AdEvent)}; Spark sums {@link #sqlContribution(String, String)}, the same
 * rule written as a SQL expression. {@code DefinitionsTest} checks the two agree for every event type.
 *
 * <p>Counts are 64-bit: 2^63 events in one window cannot happen. Spend cannot be 64-bit: one event may cost up
 * to {@code Long.MAX_VALUE} micros, so two of them already overflow a long. Its sums are exact integers
 * ({@link java.math.BigInteger} in Java, {@link #SPEND_SQL_TYPE} in SQL), never a wrapped or rounded number.
 */
public enum Metric {
    IMPRESSIONS(EventType.IMPRESSION, false),
    CLICKS(EventType.CLICK, false),
    CONVERSIONS(EventType.CONVERSION, false),
    /** Sum of cost_micros over all valid events, whatever their type. */
    SPEND_MICROS(null, true),
    /** Count of valid events, whatever their type. */
    EVENTS(null, false);

    /** SQL type of a count and its sums: 64-bit, overflow is an error (PostgreSQL, Spark with ANSI mode on). */
    public static final String COUNT_SQL_TYPE = "BIGINT";
    /**
     * SQL type of spend and its sums: an exact integer of up to 38 digits, which every engine recount uses
     * (PostgreSQL, Spark, Flink SQL, DuckDB) supports. 10^38 micros needs more than 10^19 events of the largest
     * possible cost in one window.
     */
    public static final String SPEND_SQL_TYPE = "DECIMAL(38,0)";

    private final EventType onlyType;
    private final boolean sumsCost;

    Metric(EventType onlyType, boolean sumsCost) {
        this.onlyType = onlyType;
        this.sumsCost = sumsCost;
    }

    /** The column name in every table and report. */
    public String column() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True for the counts (64-bit everywhere); false for spend, whose sums are exact integers of any size. */
    public boolean isCount() {
        return !sumsCost;
    }

    /** {@link #COUNT_SQL_TYPE} or {@link #SPEND_SQL_TYPE}: the type of this metric's columns and sums. */
    public String sqlType() {
        return sumsCost ? SPEND_SQL_TYPE : COUNT_SQL_TYPE;
    }

    /** What one event adds; always fits a long (a single cost is a long), only sums of spend may not. */
    public long contribution(AdEvent e) {
        if (onlyType != null && e.eventType != onlyType) return 0L;
        return sumsCost ? e.costMicros : 1L;
    }

    /**
     * The same rule as {@link #contribution} as a SQL expression of type {@link #sqlType()} over a row with an
     * event-type column holding the wire name and a cost column; sum it per window key. Summing spend as
     * {@link #SPEND_SQL_TYPE} keeps the sum exact where a BIGINT sum would overflow.
     */
    public String sqlContribution(String eventTypeColumn, String costColumn) {
        return sqlContribution(eventTypeColumn, costColumn, sqlType());
    }

    /**
     * {@link #sqlContribution} with the value as {@link #COUNT_SQL_TYPE} for every metric: what one event adds always
     * fits a long ({@link #contribution}). For an engine that keeps the <em>sum</em> exact another way than
     * summing {@link #SPEND_SQL_TYPE} values (the batch layer adds spend up as two BIGINT halves, much cheaper per
     * row than a 38-digit decimal).
     */
    public String sqlContributionAsBigint(String eventTypeColumn, String costColumn) {
        return sqlContribution(eventTypeColumn, costColumn, COUNT_SQL_TYPE);
    }

    private String sqlContribution(String eventTypeColumn, String costColumn, String type) {
        String value = sumsCost ? costColumn : "1";
        if (onlyType == null) return "CAST(" + value + " AS " + type + ")";
        return "CASE WHEN " + eventTypeColumn + " = '" + onlyType.wireName() + "' THEN CAST(" + value + " AS " + type
                + ") ELSE CAST(0 AS " + type + ") END";
    }
}
