package dev.recount.batch.testutils;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * One row of the raw event lake, with the Kafka coordinates the stream job records; requestId may be null, and so may
 * attributes (the JSON object of the event's fields beyond the contract).
 */
public record LakeEvent(
        String eventId,
        String eventType,
        long eventTs,
        String campaignId,
        String channelId,
        long costMicros,
        String topic,
        int partition,
        long offset,
        long recordTs,
        String requestId,
        String attributes) {

    /** An event without fields beyond the contract. */
    public LakeEvent(
            String eventId,
            String eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            String topic,
            int partition,
            long offset,
            long recordTs,
            String requestId) {
        this(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                requestId,
                null);
    }

    /** An event without a request id. */
    public LakeEvent(
            String eventId,
            String eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            String topic,
            int partition,
            long offset,
            long recordTs) {
        this(eventId, eventType, eventTs, campaignId, channelId, costMicros, topic, partition, offset, recordTs, null);
    }

    /** An event read at {@code offset} of partition 0 of ad-events, received right at its event time. */
    public static LakeEvent of(
            String eventId,
            String eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            long offset) {
        return new LakeEvent(
                eventId, eventType, eventTs, campaignId, channelId, costMicros, "ad-events", 0, offset, eventTs);
    }

    /** The same event received again at other Kafka coordinates (a producer retry, a replay). */
    public LakeEvent copyAt(String topic, int partition, long offset) {
        return new LakeEvent(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                requestId,
                attributes);
    }

    /** The same event as seen when it arrived {@code delayMillis} after its event time (late data). */
    public LakeEvent receivedAfter(long delayMillis) {
        return new LakeEvent(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                eventTs + delayMillis,
                requestId,
                attributes);
    }

    /** The event as the stream job saw it (core's AdEvent), for comparing with the stream's accumulator. */
    public AdEvent toAdEvent() {
        return new AdEvent(
                eventId,
                EventType.fromWire(eventType).orElseThrow(),
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs);
    }

    public LakeEvent withRequestId(String id) {
        return new LakeEvent(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                id,
                attributes);
    }

    /** The same event with {@code json} as its fields beyond the contract (the lake's attributes column). */
    public LakeEvent withAttributes(String json) {
        return new LakeEvent(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                requestId,
                json);
    }

    /** A row of {@code LakeReader.FILE_SCHEMA}. */
    public Row toRow() {
        return RowFactory.create(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                requestId,
                attributes);
    }

    /** A row of the lake's schema before the attributes column was added ({@link LakeFixture#writeWithoutAttributes}). */
    public Row toRowWithoutAttributes() {
        return RowFactory.create(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                topic,
                partition,
                offset,
                recordTs,
                requestId);
    }

    /** A row of the lake's first schema, before request_id existed ({@link LakeFixture#writeWithoutRequestId}). */
    public Row toRowWithoutRequestId() {
        return RowFactory.create(
                eventId, eventType, eventTs, campaignId, channelId, costMicros, topic, partition, offset, recordTs);
    }
}
