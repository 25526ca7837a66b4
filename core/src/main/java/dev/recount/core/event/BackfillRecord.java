package dev.recount.core.event;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.regex.Pattern;

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

    /**
     * Reads a record back, holding its event to the event rules that do not depend on a record timestamp (ids, type,
     * integers, event_ts in the years every store holds, cost not negative) and its own fields to their types. The
     * stream writes only valid events here, but anyone who can write to the topic can write anything: a record with
     * event_ts near 2^63 made every {@code backfill affected} run fail on an overflow, and one whose event_ts was a
     * string named a 1970 window. Such a record is refused here, and the batch skips it as malformed.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static BackfillRecord fromJson(String json) {
        try {
            JsonNode n = EventJson.MAPPER.readTree(json);
            if (n == null || !n.isObject()) throw new IllegalArgumentException("not a JSON object");
            JsonNode topicNode = n.required("topic");
            String topic = topicNode.asText();
            if (!topicNode.isTextual() || !KAFKA_TOPIC.matcher(topic).matches())
                throw new IllegalArgumentException("topic must be a Kafka topic name, got " + topicNode);
            int partition = (int) integer(n, "partition", 0, Integer.MAX_VALUE);
            long offset = integer(n, "offset", 0, Long.MAX_VALUE);
            JsonNode event = n.required("event");
            // Judged against its own event_ts, so that only the rules of the event's content apply.
            JsonNode ts = event.get("event_ts");
            long eventTs = ts != null && ts.isIntegralNumber() && ts.canConvertToLong() ? ts.asLong() : 0;
            ValidationResult valid = CONTENT_RULES.validate(
                    EventJson.MAPPER.writeValueAsBytes(event), eventTs, topic, partition, offset);
            if (!valid.isValid()) throw new IllegalArgumentException("its event: " + valid.detail());
            AdEvent e = valid.event();
            e.recordTs = 0; // not on the topic: the record timestamp the event arrived with is not kept
            return new BackfillRecord(
                    e,
                    integer(n, "window_start", Long.MIN_VALUE, Long.MAX_VALUE),
                    integer(n, "window_end", Long.MIN_VALUE, Long.MAX_VALUE),
                    integer(n, "watermark", Long.MIN_VALUE, Long.MAX_VALUE),
                    topic,
                    partition,
                    offset);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a backfill record: " + e.getMessage(), e);
        }
    }

    /** The event rules without the record-timestamp rule: it is judged against its own event_ts, any cost allowed. */
    private static final EventValidator CONTENT_RULES =
            new EventValidator(Duration.ZERO, Duration.ZERO, Long.MAX_VALUE);

    /** What Kafka accepts as a topic name. */
    private static final Pattern KAFKA_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private static long integer(JsonNode n, String field, long min, long max) {
        JsonNode v = n.required(field);
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max)
            throw new IllegalArgumentException(field + " must be an integer in [" + min + ", " + max + "], got " + v);
        return v.asLong();
    }
}
