package dev.recount.core.event;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;

/**
 * The dead-letter value of CONTRACT §1: {@code reason}, {@code detail}, {@code topic}, {@code partition},
 * {@code offset}, {@code record_ts}, {@code raw}.
 *
 * <p>Deviation, documented in the README: {@code raw} is cut at {@link #MAX_RAW_CHARS} characters (with
 * {@code raw_truncated: true} and {@code raw_bytes}) so a 1 MB garbage value cannot exceed Kafka's default
 * 1 MB message limit and stall the job. The full original stays in the input topic at the given offset.
 * Bytes that are not UTF-8 are shown with U+FFFD replacement characters.
 */
public final class DeadLetterRecord {
    public static final int MAX_RAW_CHARS = 64 * 1024;

    private DeadLetterRecord() {}

    public static String toJson(
            InvalidReason reason,
            String detail,
            String topic,
            int partition,
            long offset,
            long recordTs,
            byte[] rawValue) {
        ObjectNode n = EventJson.MAPPER.createObjectNode();
        n.put("reason", reason.wireName());
        n.put("detail", detail);
        n.put("topic", topic);
        n.put("partition", partition);
        n.put("offset", offset);
        n.put("record_ts", recordTs);
        if (rawValue == null) {
            n.putNull("raw");
        } else {
            String raw = new String(rawValue, StandardCharsets.UTF_8);
            if (raw.length() > MAX_RAW_CHARS) {
                // Never between the two halves of a surrogate pair: half a character is no text, and would reach
                // the topic as '?'.
                int cut = Character.isHighSurrogate(raw.charAt(MAX_RAW_CHARS - 1)) ? MAX_RAW_CHARS - 1 : MAX_RAW_CHARS;
                n.put("raw", raw.substring(0, cut));
                n.put("raw_truncated", true);
                n.put("raw_bytes", rawValue.length);
            } else {
                n.put("raw", raw);
            }
        }
        return n.toString();
    }
}
