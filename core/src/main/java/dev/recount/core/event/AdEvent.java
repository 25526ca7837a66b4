package dev.recount.core.event;

import java.io.Serializable;
import java.util.Arrays;
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
    /**
     * The declared string attributes' values (metric-sets file, {@code attributes}), in declaration order among the
     * string ones, defaults applied: never null inside. Null when none are declared.
     */
    public String[] stringAttributes;
    /** The declared integer attributes' values, in declaration order among the integer ones; null when none. */
    public long[] integerAttributes;
    /**
     * Every top-level field of the record outside the contract's, declared or not, as a JSON object's text exactly as
     * validation read them (no defaults); null when there were none. The lake keeps it, so a set declared later can be
     * computed from history.
     */
    public String attributesJson;
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

    /** This event with its attributes: the declared ones' values and the raw JSON of every field beyond the contract. */
    public AdEvent withAttributes(String[] stringAttributes, long[] integerAttributes, String attributesJson) {
        this.stringAttributes = stringAttributes;
        this.integerAttributes = integerAttributes;
        this.attributesJson = attributesJson;
        return this;
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
                        recordTs)
                .withAttributes(
                        stringAttributes == null ? null : stringAttributes.clone(),
                        integerAttributes == null ? null : integerAttributes.clone(),
                        attributesJson);
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
                && Arrays.equals(stringAttributes, e.stringAttributes)
                && Arrays.equals(integerAttributes, e.integerAttributes)
                && Objects.equals(attributesJson, e.attributesJson)
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
                + (attributesJson == null ? "" : " attributes=" + attributesJson)
                + " @" + topic + '-' + partition + ':' + offset + '}';
    }
}
