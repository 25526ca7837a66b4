package dev.recount.core.metrics;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.util.Locale;

/**
 * The window metrics of CONTRACT §2, each defined once as "what one valid event contributes". The Flink
 * aggregate sums {@link #contribution(AdEvent)}; Spark sums {@link #sqlContribution(String, String)}, the same
 * rule written as a SQL expression. {@code MetricDefinitionsTest} checks the two agree for every event type.
 */
public enum Metric {
    IMPRESSIONS(EventType.IMPRESSION, false),
    CLICKS(EventType.CLICK, false),
    CONVERSIONS(EventType.CONVERSION, false),
    /** Sum of cost_micros over all valid events, whatever their type. */
    SPEND_MICROS(null, true),
    /** Count of valid events, whatever their type. */
    EVENTS(null, false);

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

    public long contribution(AdEvent e) {
        if (onlyType != null && e.eventType != onlyType) return 0L;
        return sumsCost ? e.costMicros : 1L;
    }

    /**
     * The same rule as {@link #contribution} as a SQL expression over a row with an event-type column holding
     * the wire name and a cost column; sum it per window key.
     */
    public String sqlContribution(String eventTypeColumn, String costColumn) {
        String value = sumsCost ? costColumn : "1";
        if (onlyType == null) return "CAST(" + value + " AS BIGINT)";
        return "CASE WHEN " + eventTypeColumn + " = '" + onlyType.wireName() + "' THEN CAST(" + value
                + " AS BIGINT) ELSE CAST(0 AS BIGINT) END";
    }
}
