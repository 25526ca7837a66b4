package dev.recount.core.event;

import java.io.Serializable;
import java.util.Objects;

/**
 * One valid input event (CONTRACT §1) plus where it came from in Kafka. Only {@link EventValidator} creates
 * these from input, so holding one means the record passed validation.
 *
 * <p>A public no-arg constructor and mutable fields make this a Flink POJO (fast serializer, schema
 * evolution) and a Spark bean; treat instances as values all the same.
 */
public final class AdEvent implements Serializable {
    private static final long serialVersionUID = 1L;

    public String eventId;
    public EventType eventType;
    public long eventTs;
    public String campaignId;
    public String channelId;
    public long costMicros;
    /**
     * Optional (null when the record had none): an impression's own id; on a click or conversion, the id of the
     * impression it came from. Validated like the other ids; carried to the lake, not aggregated (yet).
     */
    public String requestId;
    /** Kafka coordinates: kept so the lake can pick one copy of a duplicated event_id deterministically. */
    public String topic;

    public int partition;
    public long offset;
    public long recordTs;

    public AdEvent() {}

    /** An event without a request id. */
    public AdEvent(
            String eventId,
            EventType eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            String topic,
            int partition,
            long offset,
            long recordTs) {
        this(eventId, eventType, eventTs, campaignId, channelId, costMicros, null, topic, partition, offset, recordTs);
    }

    /** @param requestId may be null: no request id */
    public AdEvent(
            String eventId,
            EventType eventType,
            long eventTs,
            String campaignId,
            String channelId,
            long costMicros,
            String requestId,
            String topic,
            int partition,
            long offset,
            long recordTs) {
        this.eventId = eventId;
        this.eventType = eventType;
        this.eventTs = eventTs;
        this.campaignId = campaignId;
        this.channelId = channelId;
        this.costMicros = costMicros;
        this.requestId = requestId;
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.recordTs = recordTs;
    }

    /** A copy with the same fields: for whoever keeps an event the job may refill (object reuse). */
    public AdEvent copy() {
        return new AdEvent(
                eventId,
                eventType,
                eventTs,
                campaignId,
                channelId,
                costMicros,
                requestId,
                topic,
                partition,
                offset,
                recordTs);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof AdEvent e)) return false;
        return eventTs == e.eventTs
                && costMicros == e.costMicros
                && partition == e.partition
                && offset == e.offset
                && recordTs == e.recordTs
                && Objects.equals(eventId, e.eventId)
                && eventType == e.eventType
                && Objects.equals(campaignId, e.campaignId)
                && Objects.equals(channelId, e.channelId)
                && Objects.equals(requestId, e.requestId)
                && Objects.equals(topic, e.topic);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                eventId, eventType, eventTs, campaignId, channelId, costMicros, requestId, topic, partition, offset);
    }

    @Override
    public String toString() {
        return "AdEvent{" + eventId + ' ' + eventType + " ts=" + eventTs + ' ' + campaignId + '/' + channelId
                + " cost=" + costMicros + (requestId == null ? "" : " request=" + requestId)
                + " @" + topic + '-' + partition + ':' + offset + '}';
    }
}
