package dev.recount.core.event;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The dead-letter value of CONTRACT §1: {@code reason}, {@code detail}, {@code topic}, {@code partition},
 * {@code offset}, {@code record_ts}, {@code raw}, and the key it is published with.
 *
 * <p>Deviation, documented in the README: {@code raw} is cut at {@link #MAX_RAW_CHARS} characters (with
 * {@code raw_truncated: true} and {@code raw_bytes}), and the key at {@link #MAX_KEY_BYTES} bytes (with
 * {@code key_truncated: true} and {@code key_bytes}). A dead letter is then at most ~470 KB, whatever the record
 * was: 64 Ki characters of raw are at most 384 KiB of JSON (a control character is written as a six-byte escape).
 * Without the caps, a record that fits Kafka's default 1 MiB limit could give a dead letter that does not, and the
 * checkpoint holding it could never be published: the job would fail over on it forever. The full original stays
 * in the input topic at the given offset. Bytes that are not UTF-8 are shown with U+FFFD replacement characters.
 */
public final class DeadLetterRecord {
    public static final int MAX_RAW_CHARS = 64 * 1024;
    /** Longest key a dead letter is published with; Kafka keys are ids, not payloads. */
    public static final int MAX_KEY_BYTES = 64 * 1024;
    /**
     * How much of a value is decoded for {@code raw}: enough bytes for {@link #MAX_RAW_CHARS} characters and a few
     * more (UTF-8 spends at most 3 bytes per character, 4 per surrogate pair), so a value of hundreds of MB is not
     * decoded whole only to be cut. The characters before the cut are those of decoding the whole value: UTF-8
     * decoding looks at most 3 bytes ahead.
     */
    static final int RAW_DECODE_BYTES = 3 * MAX_RAW_CHARS + 16;

    private DeadLetterRecord() {}

    /** The key a dead letter is published with: the input record's key (null stays null), cut to its first bytes. */
    public static byte[] key(byte[] inputKey) {
        return inputKey == null || inputKey.length <= MAX_KEY_BYTES ? inputKey : Arrays.copyOf(inputKey, MAX_KEY_BYTES);
    }

    /**
     * @param inputKey   the input record's key, for the {@code key_truncated} and {@code key_bytes} fields; may be null
     * @param rawValue   the input record's value; may be null
     */
    public static String toJson(
            InvalidReason reason,
            String detail,
            String topic,
            int partition,
            long offset,
            long recordTs,
            byte[] inputKey,
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
            String raw = new String(rawValue, 0, Math.min(rawValue.length, RAW_DECODE_BYTES), StandardCharsets.UTF_8);
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
        if (inputKey != null && inputKey.length > MAX_KEY_BYTES) {
            n.put("key_truncated", true);
            n.put("key_bytes", inputKey.length);
        }
        return n.toString();
    }
}
