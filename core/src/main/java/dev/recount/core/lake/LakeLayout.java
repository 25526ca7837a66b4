package dev.recount.core.lake;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;

/**
 * How the raw event lake is laid out, shared by the writer (stream job) and the reader (batch layer):
 * Hive-style directories {@code event_date=YYYY-MM-DD/event_hour=HH} by event time in UTC, so Spark's
 * partition discovery prunes a time range to the hours it touches.
 */
public final class LakeLayout {
    public static final String DATE_PARTITION = "event_date";
    public static final String HOUR_PARTITION = "event_hour";

    /** Parquet column names; Kafka coordinates let the batch layer keep one copy of a duplicated event_id deterministically. */
    public static final String EVENT_ID = "event_id";

    public static final String EVENT_TYPE = "event_type";
    public static final String EVENT_TS = "event_ts";
    public static final String CAMPAIGN_ID = "campaign_id";
    public static final String CHANNEL_ID = "channel_id";
    public static final String COST_MICROS = "cost_micros";
    public static final String KAFKA_TOPIC = "kafka_topic";
    public static final String KAFKA_PARTITION = "kafka_partition";
    public static final String KAFKA_OFFSET = "kafka_offset";
    public static final String RECORD_TS = "record_ts";
    /**
     * Optional (null when the event had none; absent from files written before it existed, which read as null).
     * Carried for attribution; nothing aggregates it yet.
     */
    public static final String REQUEST_ID = "request_id";
    /**
     * Optional: every top-level field of the event beyond the contract's, declared attribute or not, as the JSON
     * object's text ({@code AdEvent.attributesJson}); null when it had none, and in files written before it existed.
     * A metric set declared later reads its attributes from here.
     */
    public static final String ATTRIBUTES = "attributes";

    /** UTC hours are exact multiples of this many epoch milliseconds: a lake folder holds one. */
    public static final long HOUR_MILLIS = 3_600_000L;

    private LakeLayout() {}

    /** The start of the lake hour (the folder of {@link #partitionPath}) that holds an event of {@code eventTsMillis}. */
    public static long hourStart(long eventTsMillis) {
        return Math.floorDiv(eventTsMillis, HOUR_MILLIS) * HOUR_MILLIS;
    }

    /** The relative directory of an event, e.g. {@code event_date=2026-11-29/event_hour=07}. */
    public static String partitionPath(long eventTsMillis) {
        ZonedDateTime t = Instant.ofEpochMilli(eventTsMillis).atZone(ZoneOffset.UTC);
        return DATE_PARTITION + "=" + t.toLocalDate() + "/" + HOUR_PARTITION + "=" + String.format("%02d", t.getHour());
    }

    /** The UTC dates whose partitions can hold events in {@code [fromMillis, toMillis)}. */
    public static java.util.List<LocalDate> datesCovering(long fromMillis, long toMillis) {
        java.util.List<LocalDate> dates = new java.util.ArrayList<>();
        if (toMillis <= fromMillis) return dates;
        LocalDate d = Instant.ofEpochMilli(fromMillis).atZone(ZoneOffset.UTC).toLocalDate();
        LocalDate last =
                Instant.ofEpochMilli(toMillis - 1).atZone(ZoneOffset.UTC).toLocalDate();
        for (; !d.isAfter(last); d = d.plusDays(1)) dates.add(d);
        return dates;
    }
}
