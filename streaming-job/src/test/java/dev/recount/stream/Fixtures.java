package dev.recount.stream;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.stream.sets.JobSets;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/** Named instants and small factories shared by the tests. Never the wall clock. */
public final class Fixtures {
    /** The start of window W0 = [10:00, 10:01). */
    public static final Instant W0 = Instant.parse("2026-11-29T10:00:00Z");

    public static final Instant W1 = W0.plusSeconds(60);
    public static final Instant W2 = W0.plusSeconds(120);
    public static final Instant W3 = W0.plusSeconds(180);

    /** 1 min windows, 5 s out-of-orderness, 1 min allowed lateness, 1 s idleness, horizon = the minimum (2 min 5 s). */
    public static final EventTimeSettings SETTINGS = EventTimeSettings.defaults()
            .withWindowSize(Duration.ofMinutes(1))
            .withOutOfOrderness(Duration.ofSeconds(5))
            .withAllowedLateness(Duration.ofMinutes(1))
            .withIdleness(Duration.ofSeconds(1));

    public static final String TOPIC = "ad-events-test";

    /** The built-in definitions: the default set alone, with 1 min windows (the settings' size). */
    public static final MetricSets DEFAULT_ONLY = MetricSets.defaults();

    /**
     * Three sets, as the demo declares them: the default set (1 min); campaign_slot (campaign_id and the string
     * attribute slot_id, 5 min windows, impressions and a sum of cost); channel_country (channel_id and the attribute
     * country, 1 min: clicks from DE or FR, a sum of the integer attribute quantity).
     */
    public static final String THREE_SETS_YAML = """
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              country: {type: string, values: [DE, FR, GB, US, other], default: other}
              quantity: {type: integer, default: 0}
            sets:
              - name: default
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: impressions, kind: count, where: {event_type: impression}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                window: 5m
              - name: channel_country
                dimensions: [channel_id, country]
                measures:
                  - {name: eu_clicks, kind: count, where: {event_type: click, country: [DE, FR]}}
                  - {name: units, kind: sum, field: quantity}
            """;

    public static final MetricSets THREE_SETS = definitions(THREE_SETS_YAML, false);

    /** {@code yaml}'s sets with the documented defaults; {@code attribution} is attribution.enabled. */
    public static MetricSets definitions(String yaml, boolean attribution) {
        return MetricSets.parse(
                yaml,
                "test-sets.yaml",
                RecountConfig.defaults().with("attribution.enabled", Boolean.toString(attribution)));
    }

    /** The built-in default set, with attribution on. */
    public static MetricSets defaultOnly(boolean attribution) {
        return MetricSets.fromConfig(
                RecountConfig.defaults().with("attribution.enabled", Boolean.toString(attribution)));
    }

    /** {@code definitions} as the job runs them with {@link #SETTINGS}. */
    public static JobSets jobSets(MetricSets definitions) {
        return JobSets.of(definitions, SETTINGS);
    }

    /** The default set itself. */
    public static final MetricSet DEFAULT_SET = DEFAULT_ONLY.defaultSet().orElseThrow();

    /** The default set's stream table ({@code stream_window_metrics}). */
    public static StreamWindowMetricsTable defaultTable() {
        return new StreamWindowMetricsTable(new SetTables(DEFAULT_SET));
    }

    /**
     * Core's definition of {@code set} applied to {@code events}: per window key, the values (for the integration
     * tests' large generated inputs; the topology test writes its expected rows out by hand).
     */
    public static Map<WindowKey, MeasureValues> valuesPerWindow(MetricSet set, Collection<AdEvent> events) {
        Map<WindowKey, MeasureSums> sums = new HashMap<>();
        for (AdEvent e : events) {
            WindowKey key = WindowKey.of(set.windows().windowStart(e.eventTs), set.dimensionValues(e));
            set.add(sums.computeIfAbsent(key, k -> set.newSums()), e);
        }
        Map<WindowKey, MeasureValues> values = new HashMap<>();
        sums.forEach((k, v) -> values.put(k, set.values(v)));
        return values;
    }

    /** A default-set row's values, written out: impressions, clicks, conversions, spend_micros, events. */
    public static MeasureValues defaultValues(
            long impressions, long clicks, long conversions, BigInteger spend, long events) {
        return new MeasureValues(
                BigInteger.valueOf(impressions),
                BigInteger.valueOf(clicks),
                BigInteger.valueOf(conversions),
                spend,
                BigInteger.valueOf(events));
    }

    public static MeasureValues defaultValues(
            long impressions, long clicks, long conversions, long spend, long events) {
        return defaultValues(impressions, clicks, conversions, BigInteger.valueOf(spend), events);
    }

    private Fixtures() {}

    public static long ms(Instant t) {
        return t.toEpochMilli();
    }

    /** An event read at offset {@code offset} of partition 0, with a record timestamp 1 s after its event time. */
    public static AdEvent event(
            String id,
            EventType type,
            Instant eventTime,
            String campaign,
            String channel,
            long costMicros,
            long offset) {
        return new AdEvent(
                id,
                type,
                eventTime.toEpochMilli(),
                campaign,
                channel,
                costMicros,
                TOPIC,
                0,
                offset,
                eventTime.toEpochMilli() + 1000);
    }

    /**
     * {@code e} with the attributes of {@link #THREE_SETS_YAML} as validation fills them: the string ones (slot_id,
     * country) and the integer one (quantity), and the raw JSON of them.
     */
    public static AdEvent withAttributes(AdEvent e, String slot, String country, long quantity) {
        return e.withAttributes(
                new String[] {slot, country},
                new long[] {quantity},
                "{\"slot_id\":\"" + slot + "\",\"country\":\"" + country + "\",\"quantity\":" + quantity + "}");
    }

    public static AdEvent click(String id, Instant eventTime, long offset) {
        return event(id, EventType.CLICK, eventTime, "camp-a", "search", 250_000, offset);
    }

    public static AdEvent impression(String id, Instant eventTime, long offset) {
        return event(id, EventType.IMPRESSION, eventTime, "camp-a", "search", 1_000, offset);
    }
}
