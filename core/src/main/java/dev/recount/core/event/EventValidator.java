package dev.recount.core.event;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.AttributeResolver;
import dev.recount.core.sets.EventFields;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The validation rules of CONTRACT §1, in the one place the stream job, the generator, the advisor and the tests use.
 *
 * <p>Checks run in order malformed → schema → timestamp, and the first failure is reported. Beyond the
 * contract's letter: duplicate JSON keys are malformed (which value would count is ambiguous), and blank strings
 * count as empty ids.
 *
 * <p>The id rule (event_id, campaign_id, channel_id, and request_id when present) exists because ids are
 * PostgreSQL key columns and Parquet strings, and one bad id would otherwise stop or corrupt the speed layer:
 * <ul>
 *   <li>no control character ({@link Character#isISOControl}: C0, DEL, C1). PostgreSQL refuses a NUL in text, so a
 *       single <code>"&#92;u0000"</code> would fail every commit of the stream job, forever;</li>
 *   <li>no unpaired surrogate. JSON escapes can spell one (<code>"&#92;ud800"</code>), but it is not Unicode: the
 *       PostgreSQL driver and the Parquet writer encode it as {@code ?}, so distinct ids would merge silently;</li>
 *   <li>at most {@link #MAX_ID_BYTES} UTF-8 bytes (a B-tree key must fit a third of a page).</li>
 * </ul>
 * A control character written raw (unescaped) in a JSON string is not JSON: C0 ones make the record malformed before
 * any field is read. DEL and C1 are legal unescaped JSON, so they, and every escaped form, reach the id rule.
 *
 * <p>The validator is total: whatever the bytes, {@link #validate} returns a result and never throws.
 *
 * <p>Two paths, one set of rules. Nearly every record is valid, so each is first read with Jackson's streaming
 * parser ({@link #acceptFast}): one pass over the tokens, no tree, unknown values skipped. That path can only
 * <em>accept</em>, and only when every field it needs has exactly the shape a valid event has; anything else (an
 * invalid record, or merely an unusual valid one such as {@code "request_id": 5}) is judged again by the tree
 * path below, which holds every rule and writes every detail. Both read with the same parser and limits, and
 * neither accepts a duplicate key (the tree path's parser refuses it; the fast path finds the record's own and
 * leaves nested values' to the parser), so a record the fast path accepts is one the tree path accepts with the
 * same event; {@code EventValidatorFuzzTest} checks the pair against an independent oracle.
 */
public final class EventValidator implements Serializable {
    private static final long serialVersionUID = 1L;
    /** A reader bound to JsonNode: {@code ObjectMapper.readTree} resolved that type again for every record. */
    private static final ObjectReader TREE_READER = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            // A second value after the object ({A}{B}, NDJSON) would otherwise be dropped unseen: neither counted nor
            // a dead letter. Whitespace after it is fine.
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            // Fractions as written: a field beyond the contract is kept for the lake as valid JSON of the same value
            // (as doubles, 1e400 would be kept as the string "Infinity").
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true)) // 0.0 stays 0.0, not 0
            .build()
            .readerFor(JsonNode.class);
    /**
     * The tree reader for one value inside a record (a field beyond the contract, on the fast path): the record's
     * next field follows the value, which the whole-record reader would take for trailing tokens and refuse, sending
     * every record with such a field down the tree path as well.
     */
    private static final ObjectReader VALUE_READER =
            TREE_READER.without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    /** The tree reader's parser factory: the same features and read constraints for the fast path. */
    private static final JsonFactory PARSERS = TREE_READER.getFactory();
    /** Builds the object of a record's fields beyond the contract (attributesJson), on either path. */
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

    /** Earliest event_ts accepted, 0001-01-01T00:00:00Z (see {@link #END_OF_EVENT_TS}). */
    public static final long EARLIEST_EVENT_TS =
            Instant.parse("0001-01-01T00:00:00Z").toEpochMilli();
    /**
     * event_ts must lie before 9999-01-01T00:00:00Z, whatever the record timestamp. Every store recount writes an
     * event or its window to holds the years 1 to 9999 and no more: the lake's folders are named by a four-digit
     * year, Spark's timestamps end with 9999, and a window's end and lateness are sums of epoch milliseconds that
     * must not overflow. The last year is left out so a window and its lateness always end inside that range. A
     * broker that accepts any record timestamp (Kafka before 4.0 by default) would otherwise let one record with a
     * timestamp near 2^63 through.
     */
    public static final long END_OF_EVENT_TS =
            Instant.parse("9999-01-01T00:00:00Z").toEpochMilli();

    /** Longest id accepted (event_id, campaign_id, channel_id, request_id), in UTF-8 bytes. */
    public static final int MAX_ID_BYTES = IdRule.MAX_ID_BYTES;
    /** Whether an id may be absent or JSON null (request_id) or not (the other ids), for {@link #idProblem}. */
    private static final boolean OPTIONAL = true;

    private static final boolean REQUIRED = false;
    /** Most fields outside the contract that the fast path reads; a record with more takes the tree path. */
    private static final int MAX_IGNORED_FAST = 16;
    /** Longest JSON parser message in a detail, in characters (it may quote a 50,000-character key). */
    private static final int QUOTE_JSON_ERROR_CHARS = 400;

    private final long maxPastMillis;
    private final long maxFutureMillis;
    private final long maxCostMicros;
    /** The declared attributes (metric-sets file), in declaration order; their slots in an event's arrays below. */
    private final Attribute[] attributes;

    private final AttributeResolver resolver;
    private final int stringAttributes;
    private final int integerAttributes;

    /**
     * @param maxPast       how far event_ts may lie before the record timestamp
     * @param maxFuture     how far event_ts may lie after it
     * @param maxCostMicros the largest cost_micros accepted ({@code validation.max-cost-micros})
     */
    public EventValidator(Duration maxPast, Duration maxFuture, long maxCostMicros) {
        this(maxPast, maxFuture, maxCostMicros, List.of());
    }

    /**
     * @param attributes the declared attributes ({@code MetricSets.attributes()}): validated, defaulted and carried
     *                   in {@link AdEvent#stringAttributes} / {@link AdEvent#integerAttributes}
     */
    public EventValidator(Duration maxPast, Duration maxFuture, long maxCostMicros, List<Attribute> attributes) {
        if (maxPast.isNegative()) throw new IllegalArgumentException("maxPast must not be negative: " + maxPast);
        if (maxFuture.isNegative()) throw new IllegalArgumentException("maxFuture must not be negative: " + maxFuture);
        if (maxCostMicros < 0)
            throw new IllegalArgumentException("maxCostMicros must not be negative: " + maxCostMicros);
        this.maxPastMillis = maxPast.toMillis();
        this.maxFutureMillis = maxFuture.toMillis();
        this.maxCostMicros = maxCostMicros;
        this.attributes = attributes.toArray(Attribute[]::new);
        this.resolver = new AttributeResolver(attributes);
        this.stringAttributes = resolver.stringCount();
        this.integerAttributes = resolver.integerCount();
    }

    /** A validator with the configured rules ({@code RecountConfig.validation()}) and no declared attributes. */
    public EventValidator(ValidationSettings settings) {
        this(settings, List.of());
    }

    /** A validator with the configured rules and the declared attributes ({@code MetricSets.attributes()}). */
    public EventValidator(ValidationSettings settings, List<Attribute> attributes) {
        this(settings.maxPast(), settings.maxFuture(), settings.maxCostMicros(), attributes);
    }

    /**
     * @param value the Kafka record value, possibly null or not UTF-8
     * @param recordTs the Kafka record timestamp; event_ts is judged against it, not the wall clock
     */
    public ValidationResult validate(byte[] value, long recordTs, String topic, int partition, long offset) {
        if (value == null) return ValidationResult.invalid(InvalidReason.MALFORMED, "record value is null");
        boolean ascii = isAsciiWithoutNul(value);
        String text = null;
        if (!ascii) {
            Optional<String> decoded = decodeUtf8(value);
            if (decoded.isEmpty())
                return ValidationResult.invalid(InvalidReason.MALFORMED, "record value is not valid UTF-8");
            text = decoded.get();
        }
        AdEvent accepted = acceptFast(value, text, recordTs, topic, partition, offset);
        if (accepted != null) return ValidationResult.valid(accepted);
        JsonNode root;
        try {
            root = ascii ? TREE_READER.readTree(value) : TREE_READER.readTree(text);
        } catch (JsonProcessingException e) {
            // Jackson quotes the offending input (a duplicate key, an unexpected character, possibly half a pair).
            return ValidationResult.invalid(
                    InvalidReason.MALFORMED,
                    "not valid JSON: "
                            + IdRule.printable(String.valueOf(e.getOriginalMessage()), QUOTE_JSON_ERROR_CHARS));
        } catch (NumberFormatException e) {
            // JSON, but a number whose exponent no decimal holds (1e4007550807): it could not be kept exactly.
            return ValidationResult.invalid(
                    InvalidReason.MALFORMED,
                    "a number cannot be read exactly: "
                            + IdRule.printable(String.valueOf(e.getMessage()), QUOTE_JSON_ERROR_CHARS));
        } catch (IOException e) {
            throw new UncheckedIOException("reading an in-memory value cannot fail: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            return ValidationResult.invalid(
                    InvalidReason.MALFORMED,
                    "expected a JSON object, got "
                            + (root == null || root.isMissingNode()
                                    ? "nothing"
                                    : root.getNodeType().name().toLowerCase()));
        }

        String problem = idProblem(root, "event_id", REQUIRED);
        if (problem == null) problem = textProblem(root, "event_type");
        if (problem == null) problem = idProblem(root, "campaign_id", REQUIRED);
        if (problem == null) problem = idProblem(root, "channel_id", REQUIRED);
        if (problem == null) problem = idProblem(root, "request_id", OPTIONAL);
        if (problem == null) problem = integerProblem(root, "event_ts");
        if (problem == null) problem = integerProblem(root, "cost_micros");
        if (problem != null) return ValidationResult.invalid(InvalidReason.SCHEMA, problem);

        String eventTypeName = root.get("event_type").textValue();
        Optional<EventType> type = EventType.fromWire(eventTypeName);
        if (type.isEmpty()) {
            return ValidationResult.invalid(
                    InvalidReason.SCHEMA,
                    "event_type '" + abbreviate(eventTypeName) + "' is not one of impression, click, conversion");
        }
        long costMicros = root.get("cost_micros").longValue();
        if (costMicros < 0) {
            return ValidationResult.invalid(InvalidReason.SCHEMA, "cost_micros " + costMicros + " is negative");
        }
        if (costMicros > maxCostMicros) {
            return ValidationResult.invalid(
                    InvalidReason.SCHEMA,
                    "cost_micros " + costMicros + " is above the maximum " + maxCostMicros
                            + " (validation.max-cost-micros)");
        }
        ObjectNode extras = null;
        for (var it = root.fields(); it.hasNext(); ) {
            var field = it.next();
            if (EventFields.CONTRACT_FIELDS.contains(field.getKey())) continue;
            if (extras == null) extras = NODES.objectNode();
            extras.set(field.getKey(), field.getValue());
        }
        String[] strings = stringAttributes == 0 ? null : new String[stringAttributes];
        long[] integers = integerAttributes == 0 ? null : new long[integerAttributes];
        String attributeProblem = resolveAttributes(extras, strings, integers);
        if (attributeProblem != null) return ValidationResult.invalid(InvalidReason.SCHEMA, attributeProblem);
        long eventTs = root.get("event_ts").longValue();
        long earliest = saturatedSubtract(recordTs, maxPastMillis);
        long latest = saturatedAdd(recordTs, maxFutureMillis);
        if (eventTs < earliest || eventTs > latest) {
            return ValidationResult.invalid(
                    InvalidReason.TIMESTAMP,
                    "event_ts " + eventTs + " is outside [" + earliest + ", " + latest
                            + "], the allowed range around record timestamp " + recordTs);
        }
        if (eventTs < EARLIEST_EVENT_TS || eventTs >= END_OF_EVENT_TS) {
            return ValidationResult.invalid(
                    InvalidReason.TIMESTAMP,
                    "event_ts " + eventTs + " is outside [" + EARLIEST_EVENT_TS + ", " + END_OF_EVENT_TS
                            + "), the years 0001 to 9998 that windows, the lake and PostgreSQL hold");
        }
        JsonNode requestId = root.get("request_id");
        return ValidationResult.valid(new AdEvent(
                        root.get("event_id").textValue(),
                        type.get(),
                        eventTs,
                        root.get("campaign_id").textValue(),
                        root.get("channel_id").textValue(),
                        costMicros,
                        requestId == null || requestId.isNull() ? null : requestId.textValue(),
                        topic,
                        partition,
                        offset,
                        recordTs)
                .withAttributes(strings, integers, extras == null ? null : extras.toString()));
    }

    /** See {@link AttributeResolver#resolve}: the one rule for declared attributes, which the batch layer uses too. */
    private String resolveAttributes(ObjectNode extras, String[] strings, long[] integers) {
        return resolver.resolve(extras, strings, integers);
    }

    /** The fast path alone: the event, or null where it leaves the record to the tree path. For tests. */
    AdEvent acceptFastForTest(byte[] value, long recordTs) {
        return acceptFast(value, null, recordTs, "t", 0, 0);
    }

    /**
     * The fast path: the event when the record is a valid event whose fields have their usual shapes, else null
     * (then the tree path decides and explains). It never rejects and never throws.
     *
     * @param text the decoded value when it is not plain ASCII, else null (then {@code value} is parsed)
     */
    private AdEvent acceptFast(byte[] value, String text, long recordTs, String topic, int partition, long offset) {
        String eventId = null;
        String eventType = null;
        String campaignId = null;
        String channelId = null;
        String requestId = null;
        long eventTs = 0;
        long costMicros = 0;
        boolean hasRequestId = false;
        boolean hasTs = false;
        boolean hasCost = false;
        String[] ignoredNames = null;
        int ignored = 0;
        ObjectNode extras = null;
        try (JsonParser p = text == null ? PARSERS.createParser(value) : PARSERS.createParser(text)) {
            // The record's own keys are checked for duplicates here, not by the parser: its detector fills a hash
            // set for every record, a sixth of this path's time. A repeated key makes this path give up, and the
            // tree path (whose parser detects it) says which key.
            p.disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            if (p.nextToken() != JsonToken.START_OBJECT) return null;
            for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
                JsonToken token = p.nextToken();
                switch (name) {
                    // A known field of another shape (null, a number, a nested value, ...) is for the tree path;
                    // returning at once also keeps a nested value's fields from being read as this object's.
                    // A known field seen before is a duplicate key.
                    case "event_id" -> {
                        if (token != JsonToken.VALUE_STRING || eventId != null) return null;
                        eventId = p.getText();
                    }
                    case "event_type" -> {
                        if (token != JsonToken.VALUE_STRING || eventType != null) return null;
                        eventType = p.getText();
                    }
                    case "campaign_id" -> {
                        if (token != JsonToken.VALUE_STRING || campaignId != null) return null;
                        campaignId = p.getText();
                    }
                    case "channel_id" -> {
                        if (token != JsonToken.VALUE_STRING || channelId != null) return null;
                        channelId = p.getText();
                    }
                    case "request_id" -> {
                        if (hasRequestId) return null;
                        hasRequestId = true;
                        if (token == JsonToken.VALUE_STRING) {
                            requestId = p.getText();
                        } else if (token != JsonToken.VALUE_NULL) {
                            return null;
                        }
                    }
                    case "event_ts" -> {
                        if (!isLong(p, token) || hasTs) return null;
                        eventTs = p.getLongValue();
                        hasTs = true;
                    }
                    case "cost_micros" -> {
                        if (!isLong(p, token) || hasCost) return null;
                        costMicros = p.getLongValue();
                        hasCost = true;
                    }
                    default -> {
                        // Other fields are ignored (CONTRACT §1), scalars and nested alike, but their keys count
                        // as keys. A short list, compared one by one; a record with more is for the tree path, so
                        // a record of a hundred thousand keys costs no square of them.
                        if (ignoredNames == null) ignoredNames = new String[MAX_IGNORED_FAST];
                        if (ignored == MAX_IGNORED_FAST) return null;
                        for (int i = 0; i < ignored; i++) if (ignoredNames[i].equals(name)) return null;
                        ignoredNames[ignored++] = name;
                        // Kept for the lake (attributesJson), read by the same mapper as the tree path's, so both
                        // paths keep the same text. A nested value's keys are checked by the parser's own detector
                        // (switched on for it, and for its objects inside).
                        if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                            p.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
                        }
                        if (extras == null) extras = NODES.objectNode();
                        extras.set(name, VALUE_READER.readTree(p));
                    }
                }
            }
            // Not at the object's end: a parse error was thrown above, or the input ended inside the object.
            if (p.currentToken() != JsonToken.END_OBJECT) return null;
            // Anything but whitespace after it: for the tree path, which refuses it.
            if (p.nextToken() != null) return null;
        } catch (IOException | RuntimeException e) {
            return null; // malformed or unusual: the tree path says which and why
        }
        if (!hasTs || !hasCost || costMicros < 0 || costMicros > maxCostMicros) return null;
        Optional<EventType> type = eventType == null ? Optional.empty() : EventType.fromWire(eventType);
        if (type.isEmpty()
                || !isValidId(eventId)
                || !isValidId(campaignId)
                || !isValidId(channelId)
                || (requestId != null && !isValidId(requestId))) {
            return null;
        }
        if (eventTs < saturatedSubtract(recordTs, maxPastMillis)
                || eventTs > saturatedAdd(recordTs, maxFutureMillis)
                || eventTs < EARLIEST_EVENT_TS
                || eventTs >= END_OF_EVENT_TS) {
            return null;
        }
        String[] strings = stringAttributes == 0 ? null : new String[stringAttributes];
        long[] integers = integerAttributes == 0 ? null : new long[integerAttributes];
        if (attributes.length > 0 && resolveAttributes(extras, strings, integers) != null) return null;
        return new AdEvent(
                        eventId,
                        type.get(),
                        eventTs,
                        campaignId,
                        channelId,
                        costMicros,
                        requestId,
                        topic,
                        partition,
                        offset,
                        recordTs)
                .withAttributes(strings, integers, extras == null ? null : extras.toString());
    }

    /** A JSON integer that fits a long: what {@link #integerProblem} accepts. */
    private static boolean isLong(JsonParser p, JsonToken token) throws IOException {
        if (token != JsonToken.VALUE_NUMBER_INT) return false;
        JsonParser.NumberType type = p.getNumberType();
        return type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG;
    }

    /** What {@link #idProblem} accepts for a present string. */
    private static boolean isValidId(String id) {
        return id != null && IdRule.problem("id", id) == null;
    }

    private static String textProblem(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return field + " is missing";
        if (!n.isTextual())
            return field + " must be a string, got " + n.getNodeType().name().toLowerCase();
        if (n.textValue().isBlank()) return field + " is empty";
        // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no encoding to be measured.
        if (n.textValue().length() * 3 <= MAX_ID_BYTES) return null;
        int bytes = n.textValue().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_ID_BYTES)
            return field + " is " + bytes + " bytes long; at most " + MAX_ID_BYTES + " are accepted";
        return null;
    }

    /**
     * The id rule, in one pass over the id that also measures its UTF-8 length (no encoding, no copy: this runs
     * three or four times per event). Reports the first offending character by its UTF-16 index, the index a
     * Java, JavaScript or C# producer would use.
     *
     * @param optional whether an absent or JSON null field is allowed (request_id)
     */
    private static String idProblem(JsonNode root, String field, boolean optional) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return optional ? null : field + " is missing";
        if (!n.isTextual())
            return field + " must be a string, got " + n.getNodeType().name().toLowerCase();
        return IdRule.problem(field, n.textValue());
    }

    private static String integerProblem(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return field + " is missing";
        if (n.isTextual()) return field + " must be a JSON integer, not a string";
        if (!n.isNumber())
            return field + " must be an integer, got " + n.getNodeType().name().toLowerCase();
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

    static Optional<String> decodeUtf8(byte[] value) {
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            return Optional.of(decoder.decode(ByteBuffer.wrap(value)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    private static String abbreviate(String s) {
        return IdRule.printable(s, IdRule.QUOTE_CHARS);
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
