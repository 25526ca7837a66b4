package dev.recount.core.event;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The wire form of an event (CONTRACT §1). The generator writes it; the backfill record embeds it. */
public final class EventJson {
    static final ObjectMapper MAPPER = com.fasterxml.jackson.databind.json.JsonMapper.builder()
            // attributesJson holds fractions as written (EventValidator): read them back the same way
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
            .build();

    private EventJson() {}

    public static ObjectNode toNode(AdEvent e) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("event_id", e.eventId);
        n.put("event_type", e.eventType.wireName());
        n.put("event_ts", e.eventTs);
        n.put("campaign_id", e.campaignId);
        n.put("channel_id", e.channelId);
        n.put("cost_micros", e.costMicros);
        if (e.requestId != null) n.put("request_id", e.requestId); // optional: omitted, never written as null
        if (e.attributesJson != null) {
            // The fields beyond the contract, as the event carried them: the record reads as the one that was sent.
            try {
                MAPPER.readTree(e.attributesJson).fields().forEachRemaining(f -> n.set(f.getKey(), f.getValue()));
            } catch (com.fasterxml.jackson.core.JsonProcessingException x) {
                throw new IllegalArgumentException("attributesJson of event " + e.eventId + " is not JSON", x);
            }
        }
        return n;
    }

    public static String toJson(AdEvent e) {
        return toNode(e).toString();
    }

    /**
     * Reads the contract fields back (request_id when present); for records recount wrote itself, so it fails loudly
     * rather than validating.
     */
    public static AdEvent fromNode(JsonNode n) {
        AdEvent e = new AdEvent();
        e.eventId = n.required("event_id").asText();
        e.eventType = EventType.fromWire(n.required("event_type").asText())
                .orElseThrow(() -> new IllegalArgumentException("unknown event_type in " + n));
        e.eventTs = n.required("event_ts").asLong();
        e.campaignId = n.required("campaign_id").asText();
        e.channelId = n.required("channel_id").asText();
        e.costMicros = n.required("cost_micros").asLong();
        JsonNode requestId = n.get("request_id");
        e.requestId = requestId == null || requestId.isNull() ? null : requestId.asText();
        return e;
    }
}
