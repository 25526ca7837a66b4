package dev.recount.oracle;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * docs/contract.md §1 and §2, read as a reviewer would, and nothing of recount's validator: a record's value and
 * Kafka record timestamp make a valid {@link Event} or an invalid record of one reason, judged in the order malformed,
 * schema, timestamp.
 *
 * <ul>
 *   <li><b>malformed</b>: no value, not UTF-8, not JSON, not an object, a key given twice, anything but whitespace
 *       after the object, a raw control character inside a string;</li>
 *   <li><b>schema</b>: a contract field missing, of the wrong type or out of range (ids: the id rule below;
 *       event_type one of three words; event_ts and cost_micros JSON integers of 64 bits, cost in
 *       {@code [0, max-cost]}); a declared attribute breaking its rule (a string one: the id rule, or one of its
 *       listed values; an integer one: a JSON integer in {@code [0, 2^63)}; absent or null: its default, or, when
 *       required, this reason);</li>
 *   <li><b>timestamp</b>: event_ts outside {@code [record_ts - max-past, record_ts + max-future]} or outside the
 *       years 0001 to 9998.</li>
 * </ul>
 *
 * <p>An id is a non-blank string of at most 256 UTF-8 bytes, without control characters (C0, DEL, C1) and without
 * unpaired surrogates.
 */
public final class EventReader {
    public static final String MALFORMED = "malformed";
    public static final String SCHEMA = "schema";
    public static final String TIMESTAMP = "timestamp";

    /** 0001-01-01T00:00:00Z and 9999-01-01T00:00:00Z in epoch milliseconds. */
    static final long FIRST_VALID_TS = -62_135_596_800_000L;

    static final long END_OF_VALID_TS = 253_370_764_800_000L;
    static final int MAX_ID_BYTES = 256;
    static final Set<String> EVENT_TYPES = Set.of("impression", "click", "conversion");
    static final List<String> CONTRACT_FIELDS =
            List.of("event_id", "event_type", "event_ts", "campaign_id", "channel_id", "cost_micros", "request_id");

    /** Jackson's defaults already refuse raw control characters in strings, comments, NaN and leading zeros. */
    private static final ObjectReader JSON = new ObjectMapper()
            .reader()
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .forType(JsonNode.class);

    /** A valid event, or the reason a record is a dead letter. */
    public record Reading(Event event, String invalidReason) {
        public boolean isValid() {
            return event != null;
        }

        static Reading invalid(String reason) {
            return new Reading(null, reason);
        }
    }

    private final Map<String, Definitions.Attribute> attributes;
    private final OracleSettings settings;

    public EventReader(Map<String, Definitions.Attribute> attributes, OracleSettings settings) {
        this.attributes = Map.copyOf(attributes);
        this.settings = settings;
    }

    public Reading read(byte[] value, long recordTs) {
        if (value == null) return Reading.invalid(MALFORMED);
        JsonNode root;
        try {
            String text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(value))
                    .toString();
            root = JSON.readTree(text);
        } catch (CharacterCodingException e) {
            return Reading.invalid(MALFORMED);
        } catch (Exception e) {
            return Reading.invalid(MALFORMED); // not JSON, a duplicate key, something after the object
        }
        if (root == null || !root.isObject()) return Reading.invalid(MALFORMED);

        Map<String, Object> fields = new HashMap<>();
        for (String id : List.of("event_id", "campaign_id", "channel_id")) {
            JsonNode n = root.get(id);
            if (n == null || !n.isTextual() || !isId(n.textValue())) return Reading.invalid(SCHEMA);
            fields.put(id, n.textValue());
        }
        JsonNode type = root.get("event_type");
        if (type == null || !type.isTextual() || !EVENT_TYPES.contains(type.textValue())) {
            return Reading.invalid(SCHEMA);
        }
        fields.put("event_type", type.textValue());
        JsonNode request = root.get("request_id");
        if (request != null && !request.isNull()) {
            if (!request.isTextual() || !isId(request.textValue())) return Reading.invalid(SCHEMA);
            fields.put("request_id", request.textValue());
        }
        for (String number : List.of("event_ts", "cost_micros")) {
            JsonNode n = root.get(number);
            if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) return Reading.invalid(SCHEMA);
            fields.put(number, n.longValue());
        }
        long cost = (Long) fields.get("cost_micros");
        if (cost < 0 || cost > settings.maxCostMicros()) return Reading.invalid(SCHEMA);
        for (Definitions.Attribute a : attributes.values()) {
            JsonNode n = root.get(a.name());
            Object v = n == null || n.isNull() ? a.defaultValue() : attributeValue(a, n);
            if (v == null) return Reading.invalid(SCHEMA); // required and absent, or breaking its rule
            fields.put(a.name(), v);
        }

        long ts = (Long) fields.get("event_ts");
        boolean inRecordRange = ts >= saturated(recordTs, -settings.maxPast().toMillis())
                && ts <= saturated(recordTs, settings.maxFuture().toMillis());
        if (!inRecordRange || ts < FIRST_VALID_TS || ts >= END_OF_VALID_TS) return Reading.invalid(TIMESTAMP);
        return new Reading(new Event(fields), null);
    }

    /** The attribute's value in {@code n} (present, not null), or null when it breaks the attribute's rule. */
    private static Object attributeValue(Definitions.Attribute a, JsonNode n) {
        if (a.isString()) {
            if (!n.isTextual()) return null;
            String s = n.textValue();
            boolean ok = a.values().isEmpty() ? isId(s) : a.values().contains(s);
            return ok ? s : null;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) return null;
        return n.longValue();
    }

    /** {@code a + b}, or the nearest long when that overflows (a record timestamp may be anything). */
    private static long saturated(long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            return b < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** The id rule. */
    static boolean isId(String s) {
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            boolean control = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
            // codePointAt returns a surrogate itself only when it is not half of a pair.
            if (control || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
            i += Character.charCount(cp);
        }
        return !s.isBlank() && s.getBytes(StandardCharsets.UTF_8).length <= MAX_ID_BYTES;
    }
}
