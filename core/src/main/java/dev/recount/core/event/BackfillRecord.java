package dev.recount.core.event;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A too-late event on the backfill topic (CONTRACT §3): the event, the window it belongs to, the watermark when
 * it arrived, and where it was read. The batch layer's {@code affected} mode reads these back.
 */
public record BackfillRecord(
        AdEvent event, long windowStart, long windowEnd, long watermark, String topic, int partition, long offset) {

    public String toJson() {
        ObjectNode n = EventJson.MAPPER.createObjectNode();
        n.set("event", EventJson.toNode(event));
        n.put("window_start", windowStart);
        n.put("window_end", windowEnd);
        n.put("watermark", watermark);
        n.put("topic", topic);
        n.put("partition", partition);
        n.put("offset", offset);
        return n.toString();
    }

    public static BackfillRecord fromJson(String json) {
        try {
            JsonNode n = EventJson.MAPPER.readTree(json);
            AdEvent e = EventJson.fromNode(n.required("event"));
            String topic = n.required("topic").asText();
            int partition = n.required("partition").asInt();
            long offset = n.required("offset").asLong();
            e.topic = topic;
            e.partition = partition;
            e.offset = offset;
            return new BackfillRecord(
                    e,
                    n.required("window_start").asLong(),
                    n.required("window_end").asLong(),
                    n.required("watermark").asLong(),
                    topic,
                    partition,
                    offset);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a backfill record: " + e.getMessage(), e);
        }
    }
}
