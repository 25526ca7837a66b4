package dev.recount.core.event;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * The validation rules of CONTRACT §1, in the one place the stream job, the generator and the tests use.
 *
 * <p>Checks run in order malformed → schema → timestamp, and the first failure is reported. Beyond the
 * contract's letter: duplicate JSON keys are malformed (which value would count is ambiguous), blank strings
 * count as empty ids, and an id longer than {@link #MAX_ID_BYTES} UTF-8 bytes is a schema error: the ids are
 * PostgreSQL key columns, and an oversized key would fail every commit of the stream job, forever.
 */
public final class EventValidator implements Serializable {
    private static final long serialVersionUID = 1L;
    /** A reader bound to JsonNode: {@code ObjectMapper.readTree} resolved that type again for every record. */
    private static final ObjectReader TREE_READER = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .build()
            .readerFor(JsonNode.class);

    /** Longest event_id, campaign_id or channel_id accepted, in UTF-8 bytes (a B-tree key must fit a page third). */
    public static final int MAX_ID_BYTES = 256;

    private final long maxPastMillis;
    private final long maxFutureMillis;

    public EventValidator(Duration maxPast, Duration maxFuture) {
        if (maxPast.isNegative()) throw new IllegalArgumentException("maxPast must not be negative: " + maxPast);
        if (maxFuture.isNegative()) throw new IllegalArgumentException("maxFuture must not be negative: " + maxFuture);
        this.maxPastMillis = maxPast.toMillis();
        this.maxFutureMillis = maxFuture.toMillis();
    }

    /**
     * @param value the Kafka record value, possibly null or not UTF-8
     * @param recordTs the Kafka record timestamp; event_ts is judged against it, not the wall clock
     */
    public ValidationResult validate(byte[] value, long recordTs, String topic, int partition, long offset) {
        if (value == null) return ValidationResult.invalid(InvalidReason.MALFORMED, "record value is null");
        JsonNode root;
        try {
            if (isAsciiWithoutNul(value)) {
                root = TREE_READER.readTree(value);
            } else {
                Optional<String> text = decodeUtf8(value);
                if (text.isEmpty()) return ValidationResult.invalid(InvalidReason.MALFORMED, "record value is not valid UTF-8");
                root = TREE_READER.readTree(text.get());
            }
        } catch (JsonProcessingException e) {
            return ValidationResult.invalid(InvalidReason.MALFORMED, "not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("reading an in-memory value cannot fail: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            return ValidationResult.invalid(InvalidReason.MALFORMED,
                    "expected a JSON object, got " + (root == null || root.isMissingNode() ? "nothing" : root.getNodeType().name().toLowerCase()));
        }

        String problem = null;
        String eventId = requiredText(root, "event_id");
        String eventTypeName = requiredText(root, "event_type");
        String campaignId = requiredText(root, "campaign_id");
        String channelId = requiredText(root, "channel_id");
        for (String field : new String[] {"event_id", "event_type", "campaign_id", "channel_id"}) {
            if (problem == null) problem = textProblem(root, field);
        }
        if (problem == null) problem = integerProblem(root, "event_ts");
        if (problem == null) problem = integerProblem(root, "cost_micros");
        if (problem != null) return ValidationResult.invalid(InvalidReason.SCHEMA, problem);

        Optional<EventType> type = EventType.fromWire(eventTypeName);
        if (type.isEmpty()) {
            return ValidationResult.invalid(InvalidReason.SCHEMA,
                    "event_type '" + abbreviate(eventTypeName) + "' is not one of impression, click, conversion");
        }
        long costMicros = root.get("cost_micros").longValue();
        if (costMicros < 0) {
            return ValidationResult.invalid(InvalidReason.SCHEMA, "cost_micros " + costMicros + " is negative");
        }
        long eventTs = root.get("event_ts").longValue();
        long earliest = saturatedSubtract(recordTs, maxPastMillis);
        long latest = saturatedAdd(recordTs, maxFutureMillis);
        if (eventTs < earliest || eventTs > latest) {
            return ValidationResult.invalid(InvalidReason.TIMESTAMP, "event_ts " + eventTs + " is outside ["
                    + earliest + ", " + latest + "], the allowed range around record timestamp " + recordTs);
        }
        return ValidationResult.valid(new AdEvent(eventId, type.get(), eventTs, campaignId, channelId, costMicros,
                topic, partition, offset, recordTs));
    }

    private static String requiredText(JsonNode root, String field) {
        JsonNode n = root.get(field);
        return n != null && n.isTextual() ? n.textValue() : null;
    }

    private static String textProblem(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return field + " is missing";
        if (!n.isTextual()) return field + " must be a string, got " + n.getNodeType().name().toLowerCase();
        if (n.textValue().isBlank()) return field + " is empty";
        // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no encoding to be measured.
        if (n.textValue().length() * 3 <= MAX_ID_BYTES) return null;
        int bytes = n.textValue().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_ID_BYTES) return field + " is " + bytes + " bytes long; at most " + MAX_ID_BYTES + " are accepted";
        return null;
    }

    private static String integerProblem(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return field + " is missing";
        if (n.isTextual()) return field + " must be a JSON integer, not a string";
        if (!n.isNumber()) return field + " must be an integer, got " + n.getNodeType().name().toLowerCase();
        if (!n.isIntegralNumber()) return field + " must be an integer, got " + abbreviate(n.asText());
        if (!n.canConvertToLong()) return field + " " + abbreviate(n.asText()) + " does not fit a 64-bit integer";
        return null;
    }

    /**
     * Nearly every event is plain ASCII: valid UTF-8 as it is, so Jackson can parse the bytes directly (its byte
     * parser is faster than decoding to a String and parsing that). NUL is excluded because Jackson guesses
     * UTF-16/32 from NUL bytes; without NULs and below 0x80 it reads UTF-8. Anything else takes the strict decoder.
     */
    private static boolean isAsciiWithoutNul(byte[] value) {
        for (byte b : value) {
            if (b <= 0) return false; // 0, or negative: 0x80-0xFF
        }
        return true;
    }

    private static Optional<String> decodeUtf8(byte[] value) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            return Optional.of(decoder.decode(ByteBuffer.wrap(value)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static long saturatedSubtract(long a, long b) {
        long r = a - b;
        return ((a ^ b) & (a ^ r)) < 0 ? Long.MIN_VALUE : r;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
