package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EventValidatorTest {
    /** Kafka record timestamp of every fixture: event times are judged against it, not the wall clock. */
    static final long RECORD_TS = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();

    static final long EVENT_TS = Instant.parse("2026-11-29T09:59:30Z").toEpochMilli();

    /** The default of validation.max-cost-micros: 1,000,000.00 currency units. */
    static final long MAX_COST = 1_000_000_000_000L;

    final EventValidator validator = new EventValidator(Duration.ofDays(7), Duration.ofMinutes(5), MAX_COST);

    ValidationResult validate(String json) {
        return validator.validate(json == null ? null : json.getBytes(StandardCharsets.UTF_8), RECORD_TS, "in", 2, 41L);
    }

    static String event(String overrides) {
        return "{\"event_id\":\"e-1\",\"event_type\":\"click\",\"event_ts\":" + EVENT_TS
                + ",\"campaign_id\":\"c-1\",\"channel_id\":\"web\",\"cost_micros\":2500" + overrides + "}";
    }

    /**
     * The streaming fast path must not read a nested value's fields as the record's own: a contract field holding
     * an object (even one that looks like a whole event) is a schema error, and unknown nested values with
     * contract-named fields inside are ignored.
     */
    @Test
    void nestedValuesNeverStandInForTheRecordsOwnFields() {
        String nested = "{\"event_id\":{\"event_id\":\"e-1\",\"event_type\":\"click\",\"event_ts\":" + EVENT_TS
                + ",\"campaign_id\":\"c-1\",\"channel_id\":\"web\",\"cost_micros\":2500}}";
        ValidationResult r = validate(nested);
        assertThat(r.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).isEqualTo("event_id must be a string, got object");

        ValidationResult decoy = validate(event(",\"x\":{\"event_id\":\"other\",\"cost_micros\":-1}"));
        assertThat(decoy.isValid()).as(decoy.toString()).isTrue();
        assertThat(decoy.event().eventId).isEqualTo("e-1");
        assertThat(decoy.event().costMicros).isEqualTo(2500);

        ValidationResult duplicateInside = validate(event(",\"x\":{\"a\":1,\"a\":2}"));
        assertThat(duplicateInside.reason()).isEqualTo(InvalidReason.MALFORMED);
    }

    /**
     * A second value after the object (two events in one record, NDJSON) was dropped unseen: the first counted, the
     * second neither counted nor a dead letter. Now the record is malformed, whichever path reads it; whitespace
     * after the object is not content.
     */
    @Test
    void anythingAfterTheObjectButWhitespaceIsMalformed() {
        String second = event("").replace("e-1", "e-2");
        for (String trailing : List.of(second, "\n" + second, " trailing", "}", "[]", "1")) {
            ValidationResult r = validate(event("") + trailing);
            assertThat(r.reason()).as(trailing).isEqualTo(InvalidReason.MALFORMED);
            assertThat(r.detail()).as(trailing).startsWith("not valid JSON: ");
        }
        for (String space : List.of("\n", " \r\n\t ", "")) {
            ValidationResult r = validate(event("") + space);
            assertThat(r.isValid()).as(r.toString()).isTrue();
        }
    }

    /**
     * Duplicate keys are malformed wherever they are: the record's own keys are checked by the fast path itself, a
     * nested value's by the parser, and neither may let one through or see a duplicate that is not there.
     */
    @Test
    void aDuplicateKeyIsMalformedAtAnyDepthAndKeysOfDifferentObjectsAreNot() {
        for (String known : List.of(
                "\"event_id\":\"e-2\"",
                "\"event_type\":\"click\"",
                "\"campaign_id\":\"c-1\"",
                "\"channel_id\":\"web\"",
                "\"event_ts\":" + EVENT_TS,
                "\"cost_micros\":2500")) {
            ValidationResult twice = validate(event("," + known));
            assertThat(twice.reason()).as(known).isEqualTo(InvalidReason.MALFORMED);
            assertThat(twice.detail()).as(known).contains("Duplicate field");
        }
        for (String extra : List.of(
                ",\"request_id\":null,\"request_id\":null",
                ",\"request_id\":\"r\",\"request_id\":null",
                ",\"x\":1,\"x\":1",
                ",\"x\":{},\"y\":2,\"x\":[]",
                ",\"x\":[{\"a\":1,\"a\":2}]",
                ",\"x\":{\"y\":[0,{\"z\":{\"a\":1,\"b\":2,\"a\":3}}]}",
                ",\"x\":{\"a\":1},\"y\":{\"a\":1,\"a\":1}")) {
            ValidationResult r = validate(event(extra));
            assertThat(r.reason()).as(extra).isEqualTo(InvalidReason.MALFORMED);
            assertThat(r.detail()).as(extra).contains("Duplicate field");
        }
        for (String extra : List.of(
                ",\"x\":{\"a\":1},\"y\":{\"a\":1},\"z\":[{\"a\":1},{\"a\":1}]",
                ",\"x\":{\"event_id\":\"e-9\"},\"a\":{\"a\":{\"a\":1}}",
                ",\"X\":1,\"x\":2,\"x \":3")) {
            ValidationResult r = validate(event(extra));
            assertThat(r.isValid()).as(extra + ": " + r).isTrue();
        }
        // Many ignored fields: past the fast path's short list the tree path judges, with the same verdicts.
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 40; i++) many.append(",\"f").append(i).append("\":").append(i);
        assertThat(validate(event(many.toString())).isValid()).isTrue();
        assertThat(validate(event(many + ",\"f3\":0")).reason()).isEqualTo(InvalidReason.MALFORMED);
    }

    @Test
    void acceptsAValidEventAndKeepsItsKafkaCoordinates() {
        ValidationResult r = validate(event(",\"extra\":{\"ignored\":true}"));

        assertThat(r.isValid()).isTrue();
        assertThat(r.event())
                .isEqualTo(new AdEvent("e-1", EventType.CLICK, EVENT_TS, "c-1", "web", 2500, "in", 2, 41L, RECORD_TS)
                        .withAttributes(null, null, "{\"extra\":{\"ignored\":true}}"));
    }

    @Test
    void nullValueIsMalformed() {
        assertThat(validate(null).reason()).isEqualTo(InvalidReason.MALFORMED);
    }

    @Test
    void nonUtf8BytesAreMalformed() {
        byte[] latin1 = event("").replace("c-1", "caf\u00e9").getBytes(StandardCharsets.ISO_8859_1);
        ValidationResult r = validator.validate(latin1, RECORD_TS, "in", 0, 0);

        assertThat(r.reason()).isEqualTo(InvalidReason.MALFORMED);
        assertThat(r.detail()).contains("UTF-8");
    }

    /** Bytes that are not strict UTF-8, inside an otherwise valid event's campaign_id. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "overlong slash        | C0 AF",
                "encoded surrogate     | ED A0 80",
                "truncated sequence    | E2 82",
                "lone continuation     | 80",
                "beyond U+10FFFF       | F4 90 80 80",
            })
    void invalidUtf8SequencesAreMalformed(String name, String hex) {
        ValidationResult r = validator.validate(withCampaignBytes(hex), RECORD_TS, "in", 0, 0);
        assertThat(r.reason()).as(name).isEqualTo(InvalidReason.MALFORMED);
        assertThat(r.detail()).as(name).contains("UTF-8");
    }

    @Test
    void jsonInUtf16IsMalformedThoughItsBytesLookAscii() {
        assertThat(validator
                        .validate(event("").getBytes(StandardCharsets.UTF_16BE), RECORD_TS, "in", 0, 0)
                        .reason())
                .isEqualTo(InvalidReason.MALFORMED);
        assertThat(validator
                        .validate(event("").getBytes(StandardCharsets.UTF_16LE), RECORD_TS, "in", 0, 0)
                        .reason())
                .isEqualTo(InvalidReason.MALFORMED);
    }

    @Test
    void nonAsciiIdsAreValidUtf8() {
        ValidationResult r = validate(event("").replace("c-1", "caf\u00e9-\uD83D\uDE80"));
        assertThat(r.isValid()).as(r.toString()).isTrue();
        assertThat(r.event().campaignId).isEqualTo("caf\u00e9-\uD83D\uDE80");
    }

    private byte[] withCampaignBytes(String hex) {
        String[] parts = event("").split("c-1", 2);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(parts[0].getBytes(StandardCharsets.UTF_8));
        for (String h : hex.strip().split(" ")) out.write(Integer.parseInt(h, 16));
        out.writeBytes(parts[1].getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    @Test
    void oneMegabyteValueIsJudgedWithoutFailing() {
        String big = event(",\"padding\":\"" + "x".repeat(1_048_576) + "\"");
        assertThat(validate(big).isValid()).isTrue();
        assertThat(validate("x".repeat(1_048_576)).reason()).isEqualTo(InvalidReason.MALFORMED);
    }

    /**
     * Shapes past the JSON reader's own limits (nesting depth, number length, name length), in a field the contract
     * ignores, where neither path reads a value: each is one malformed record, never an exception out of the
     * validator, and the next record is judged as usual.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"nesting, 100000", "number, 2000000", "name, 2000000"})
    void shapesBeyondTheReadersLimitsAreMalformedRecords(String shape, int size) {
        String extra = switch (shape) {
            case "nesting" -> ",\"x\":" + "[".repeat(size) + "]".repeat(size);
            case "number" -> ",\"x\":" + "9".repeat(size);
            case "name" -> ",\"" + "n".repeat(size) + "\":1";
            default -> throw new IllegalArgumentException("no such shape: " + shape);
        };
        ValidationResult r = validate(event(extra));
        assertThat(r.reason()).as(shape).isEqualTo(InvalidReason.MALFORMED);
        assertThat(r.detail()).as(shape).isNotBlank().hasSizeLessThan(1_000);
        assertThat(validate(event("")).isValid()).isTrue();
    }

    /**
     * A string longer than the reader's limit (20 MB) in a field beyond the contract cannot be read, so the lake could
     * not keep it: the record is malformed rather than kept without it; a record that also breaks a rule is a dead
     * letter too, whichever of the two the reason names.
     */
    @Test
    void aStringBeyondTheReadersLimitInAFieldBeyondTheContractIsMalformed() {
        String huge = ",\"x\":\"" + "s".repeat(25_000_000) + "\"";
        ValidationResult unreadable = validate(event(huge));
        assertThat(unreadable.reason()).isEqualTo(InvalidReason.MALFORMED);
        assertThat(unreadable.detail()).isNotBlank().hasSizeLessThan(1_000);
        ValidationResult broken = validate(event(huge).replace("\"click\"", "null"));
        assertThat(broken.reason()).isIn(InvalidReason.SCHEMA, InvalidReason.MALFORMED);
        assertThat(broken.detail()).isNotBlank().hasSizeLessThan(1_000);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "not json             | {oops",
                "json array           | [1,2]",
                "json string          | \"hello\"",
                "empty value          | ''",
                "duplicate keys       | {\"event_id\":\"a\",\"event_id\":\"b\"}",
            })
    void malformed(String name, String value) {
        assertThat(validate(value).reason()).as(name).isEqualTo(InvalidReason.MALFORMED);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "missing event_id       | \"event_id\":\"e-1\",                  | ",
                "empty event_id         | \"event_id\":\"e-1\"                   | \"event_id\":\"\"",
                "blank channel          | \"channel_id\":\"web\"                 | \"channel_id\":\"  \"",
                "numeric campaign       | \"campaign_id\":\"c-1\"                | \"campaign_id\":7",
                "unknown type           | \"event_type\":\"click\"               | \"event_type\":\"tap\"",
                "type is case-sensitive | \"event_type\":\"click\"               | \"event_type\":\"Click\"",
                "negative cost          | \"cost_micros\":2500                   | \"cost_micros\":-1",
                "fractional cost        | \"cost_micros\":2500                   | \"cost_micros\":2.5",
                "cost as string         | \"cost_micros\":2500                   | \"cost_micros\":\"2500\"",
                "cost beyond long       | \"cost_micros\":2500                   | \"cost_micros\":9223372036854775808",
                "null type              | \"event_type\":\"click\"               | \"event_type\":null",
            })
    void schema(String name, String find, String replace) {
        String json = event("").replace(find.strip(), replace == null ? "" : replace.strip());
        json = json.replace("{,", "{").replace(",,", ",").replace(",}", "}");
        ValidationResult r = validate(json);

        assertThat(r.reason()).as(name + ": " + json + " -> " + r).isEqualTo(InvalidReason.SCHEMA);
    }

    @Test
    void idsLongerThanAKeyColumnCanHoldAreSchemaErrors() {
        String fits = "c".repeat(EventValidator.MAX_ID_BYTES);
        String tooLong = "\u00e9".repeat(EventValidator.MAX_ID_BYTES / 2 + 1); // 2 bytes each in UTF-8

        assertThat(validate(event("").replace("\"c-1\"", "\"" + fits + "\"")).isValid())
                .isTrue();
        ValidationResult r = validate(event("").replace("\"c-1\"", "\"" + tooLong + "\""));
        assertThat(r.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).contains("campaign_id").contains("258 bytes");
    }

    @Test
    void numbersWrittenAsStringsAreInvalid() {
        String json = event("").replace("\"event_ts\":" + EVENT_TS, "\"event_ts\":\"" + EVENT_TS + "\"");
        assertThat(validate(json).reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(validate(json).detail()).contains("event_ts").contains("string");
    }

    @Test
    void timestampBeyondLongIsSchemaNotTimestamp() {
        String json = event("").replace("\"event_ts\":" + EVENT_TS, "\"event_ts\":123456789012345678901234567890");
        assertThat(validate(json).reason()).isEqualTo(InvalidReason.SCHEMA);
    }

    @Test
    void eventTimeIsJudgedAgainstTheRecordTimestampInclusively() {
        long maxFuture = RECORD_TS + Duration.ofMinutes(5).toMillis();
        long maxPast = RECORD_TS - Duration.ofDays(7).toMillis();

        assertThat(validate(withTs(maxFuture)).isValid()).isTrue();
        assertThat(validate(withTs(maxPast)).isValid()).isTrue();
        assertThat(validate(withTs(maxFuture + 1)).reason()).isEqualTo(InvalidReason.TIMESTAMP);
        assertThat(validate(withTs(maxPast - 1)).reason()).isEqualTo(InvalidReason.TIMESTAMP);
        assertThat(validate(withTs(Long.MIN_VALUE)).reason()).isEqualTo(InvalidReason.TIMESTAMP);
        assertThat(validate(withTs(Long.MAX_VALUE)).reason()).isEqualTo(InvalidReason.TIMESTAMP);
    }

    /**
     * A broker that accepts any record timestamp (Kafka before 4.0, by default) lets a record stamped near 2^63
     * through, and event_ts within its range around it: its window's end would overflow, its lake folder would be
     * named by a nine-digit year. Whatever the record timestamp, event_ts must lie in the years 0001 to 9998.
     */
    @Test
    void eventTimeMustLieInTheYearsEveryStoreHoldsWhateverTheRecordTimestamp() {
        long end = EventValidator.END_OF_EVENT_TS;
        long first = EventValidator.EARLIEST_EVENT_TS;
        assertThat(Instant.ofEpochMilli(end)).isEqualTo(Instant.parse("9999-01-01T00:00:00Z"));
        assertThat(Instant.ofEpochMilli(first)).isEqualTo(Instant.parse("0001-01-01T00:00:00Z"));

        assertThat(validateAt(end - 1, end).isValid()).isTrue();
        assertThat(validateAt(first, first).isValid()).isTrue();
        for (long[] tsAndRecordTs : new long[][] {
            {end, end}, {first - 1, first}, {Long.MAX_VALUE - 60_000, Long.MAX_VALUE}, {Long.MIN_VALUE, Long.MIN_VALUE}
        }) {
            ValidationResult r = validateAt(tsAndRecordTs[0], tsAndRecordTs[1]);
            assertThat(r.reason()).as("event_ts %d", tsAndRecordTs[0]).isEqualTo(InvalidReason.TIMESTAMP);
            assertThat(r.detail()).contains("the years 0001 to 9998");
        }
        // Past the relative rule too: that one is named first.
        assertThat(validateAt(end, RECORD_TS).detail()).contains("the allowed range around record timestamp");
    }

    private ValidationResult validateAt(long eventTs, long recordTs) {
        byte[] value = withTs(eventTs).getBytes(StandardCharsets.UTF_8);
        return validator.validate(value, recordTs, "in", 2, 41L);
    }

    // --- ids: no control characters, no unpaired surrogates (CONTRACT §1) ---------------------------------------

    /**
     * A campaign_id as it appears between the quotes of the JSON text ({@code \\u} escapes stay escapes; the other
     * characters are sent as their UTF-8 bytes), and the start of the detail it must get.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "escaped NUL              | cmp-\\u0000x        | campaign_id has control character U+0000 at index 4 in 'cmp-\\u0000x'",
                "escaped NUL, first       | \\u0000             | campaign_id has control character U+0000 at index 0",
                "escaped C0 SOH           | a\\u0001            | campaign_id has control character U+0001 at index 1",
                "escaped C0 unit sep.     | a\\u001F            | campaign_id has control character U+001F at index 1",
                "escaped tab, short form  | a\\tb               | campaign_id has control character U+0009 at index 1",
                "escaped newline only     | \\n                 | campaign_id has control character U+000A at index 0",
                "escaped DEL              | a\\u007f            | campaign_id has control character U+007F at index 1",
                "raw DEL (ASCII fast path)| a\u007F            | campaign_id has control character U+007F at index 1",
                "escaped C1 NEL           | a\\u0085            | campaign_id has control character U+0085 at index 1",
                "raw C1, first            | caf\u00e9\u0080    | campaign_id has control character U+0080 at index 4",
                "raw C1, last             | \u009F             | campaign_id has control character U+009F at index 0",
                "lone high at the end     | cmp\\ud800          | campaign_id has unpaired surrogate U+D800 at index 3 in 'cmp\\ud800'",
                "lone high before ASCII   | cmp\\uD83Dx         | campaign_id has unpaired surrogate U+D83D at index 3",
                "lone low                 | cmp\\udc00x         | campaign_id has unpaired surrogate U+DC00 at index 3",
                "reversed pair            | cmp\\udc00\\ud800   | campaign_id has unpaired surrogate U+DC00 at index 3",
                "high, high, low          | \\ud83d\\ud83d\\ude80 | campaign_id has unpaired surrogate U+D83D at index 0",
                "low after a whole pair   | \\ud83d\\ude80\\ude80 | campaign_id has unpaired surrogate U+DE80 at index 2",
            })
    void idsWithControlCharactersOrUnpairedSurrogatesAreSchemaErrors(String name, String id, String detail) {
        ValidationResult r = validate(event("").replace("\"c-1\"", "\"" + id + "\""));

        assertThat(r.reason()).as(name + " -> " + r).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).as(name).startsWith(detail);
        assertThat(hasUnpairedSurrogate(r.detail())).as("detail %s", r.detail()).isFalse();
        assertThat(r.detail().chars().anyMatch(Character::isISOControl))
                .as("detail %s", r.detail())
                .isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"event_id, e-1", "campaign_id, c-1", "channel_id, web"})
    void everyIdFollowsTheIdRule(String field, String value) {
        ValidationResult nul = validate(event("").replace("\"" + value + "\"", "\"" + value + "\\u0000\""));
        ValidationResult lone = validate(event("").replace("\"" + value + "\"", "\"\\udfff" + value + "\""));

        assertThat(nul.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(nul.detail()).startsWith(field + " has control character U+0000 at index " + value.length());
        assertThat(lone.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(lone.detail()).startsWith(field + " has unpaired surrogate U+DFFF at index 0");
    }

    /** JSON forbids raw C0 characters in strings, so such a record is not JSON at all: malformed, not schema. */
    @ParameterizedTest(name = "raw 0x{0}")
    @CsvSource({"00", "01", "09", "1F"})
    void rawC0CharactersInAStringAreMalformedJson(String hex) {
        byte[] value = withCampaignBytes("63 2D " + hex + " 78"); // c-?x

        ValidationResult r = validator.validate(value, RECORD_TS, "in", 0, 0);
        assertThat(r.reason()).isEqualTo(InvalidReason.MALFORMED);
        assertThat(r.detail()).contains("CTRL-CHAR, code " + Integer.parseInt(hex, 16));
    }

    @Test
    void wellFormedIdsBeyondAsciiAreAcceptedAsSent() {
        String id = "\u00e9\u4e2d?\uFFFD\uFEFF\u00A0\uD83D\uDE80";
        ValidationResult raw = validate(event("").replace("\"c-1\"", "\"" + id + "\""));
        ValidationResult escaped =
                validate(event("").replace("\"c-1\"", "\"\\u00e9\\u4e2d?\\ufffd\\ufeff\\u00a0\\ud83d\\ude80\""));

        assertThat(raw.isValid()).as(raw.toString()).isTrue();
        assertThat(raw.event().campaignId).isEqualTo(id);
        assertThat(escaped.isValid()).as(escaped.toString()).isTrue();
        assertThat(escaped.event().campaignId).isEqualTo(id);
    }

    @Test
    void aSurrogatePairCountsAsFourBytesAndIsNeverSplit() {
        String pairs = "\uD83D\uDE80".repeat(EventValidator.MAX_ID_BYTES / 4); // exactly 256 bytes
        assertThat(validate(event("").replace("\"c-1\"", "\"" + pairs + "\"")).isValid())
                .isTrue();
        ValidationResult r = validate(event("").replace("\"c-1\"", "\"" + pairs + "x\""));
        assertThat(r.detail()).isEqualTo("campaign_id is 257 bytes long; at most 256 are accepted");
    }

    /** A detail quotes at most 80 characters of the value, never half a surrogate pair, never a raw control. */
    @Test
    void theOffendingValueIsQuotedAbbreviatedAndEscaped() {
        String longId = "a".repeat(76) + "\uD83D\uDE80" + "b".repeat(100) + "\\u0000";

        ValidationResult r = validate(event("").replace("\"c-1\"", "\"" + longId + "\""));

        assertThat(r.detail())
                .isEqualTo("campaign_id has control character U+0000 at index 178 in '" + "a".repeat(76) + "...'");
        ValidationResult type = validate(event("").replace("\"click\"", "\"click\\ud800\\u0001\""));
        assertThat(type.detail())
                .isEqualTo("event_type 'click\\ud800\\u0001' is not one of impression, click, conversion");
    }

    // --- cost_micros: at most validation.max-cost-micros ---------------------------------------------------------

    @Test
    void costAtTheMaximumIsValidAndOneAboveIsASchemaError() {
        assertThat(validate(withCost(String.valueOf(MAX_COST))).event().costMicros)
                .isEqualTo(MAX_COST);

        ValidationResult above = validate(withCost(String.valueOf(MAX_COST + 1)));
        assertThat(above.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(above.detail())
                .isEqualTo("cost_micros 1000000000001 is above the maximum 1000000000000 (validation.max-cost-micros)");
        assertThat(validate(withCost(String.valueOf(Long.MAX_VALUE))).reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(validate(withCost("0")).isValid()).isTrue();
    }

    @Test
    void theCostMaximumIsConfigurable() {
        EventValidator strict = new EventValidator(ValidationSettings.defaults().withMaxCostMicros(5_000));
        byte[] atMax = withCost("5000").getBytes(StandardCharsets.UTF_8);
        byte[] above = withCost("5001").getBytes(StandardCharsets.UTF_8);

        assertThat(strict.validate(atMax, RECORD_TS, "in", 0, 0).isValid()).isTrue();
        assertThat(strict.validate(above, RECORD_TS, "in", 0, 0).detail()).contains("above the maximum 5000");
        assertThat(ValidationSettings.defaults().maxCostMicros()).isEqualTo(MAX_COST);
        assertThatThrownBy(() -> new EventValidator(Duration.ZERO, Duration.ZERO, -1))
                .hasMessageContaining("maxCostMicros");
    }

    static String withCost(String literal) {
        return event("").replace("\"cost_micros\":2500", "\"cost_micros\":" + literal);
    }

    // --- request_id: optional, an id when present ---------------------------------------------------------------

    @Test
    void requestIdIsOptional() {
        assertThat(validate(event("")).event().requestId).isNull();
        assertThat(validate(event(",\"request_id\":null")).event().requestId).isNull();

        ValidationResult r = validate(event(",\"request_id\":\"imp-\\u00e9-7\""));
        assertThat(r.event().requestId).isEqualTo("imp-\u00e9-7");
        assertThat(r.event())
                .isEqualTo(new AdEvent(
                        "e-1", EventType.CLICK, EVENT_TS, "c-1", "web", 2500, "imp-\u00e9-7", "in", 2, 41L, RECORD_TS));
    }

    /** request_id's value as JSON text, with ` for ". */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "empty                 | ``                 | request_id is empty",
                "blank                 | `   `              | request_id is empty",
                "number                | 17                 | request_id must be a string, got number",
                "number as float       | 1.5                | request_id must be a string, got number",
                "boolean               | true               | request_id must be a string, got boolean",
                "object                | {}                 | request_id must be a string, got object",
                "array                 | [`r-1`]            | request_id must be a string, got array",
                "NUL                   | `r-\\u0000`        | request_id has control character U+0000 at index 2",
                "C1                    | `r-\u0090`         | request_id has control character U+0090 at index 2",
                "lone low surrogate    | `r-\\udc01`        | request_id has unpaired surrogate U+DC01 at index 2",
            })
    void aPresentRequestIdMustBeAValidId(String name, String json, String detail) {
        ValidationResult r = validate(event(",\"request_id\":" + json.replace('`', '"')));

        assertThat(r.reason()).as(name + " -> " + r).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).as(name).startsWith(detail);
    }

    @Test
    void requestIdsLongerThanAKeyColumnCanHoldAreSchemaErrors() {
        String fits = "r".repeat(EventValidator.MAX_ID_BYTES);
        assertThat(validate(event(",\"request_id\":\"" + fits + "\"")).event().requestId)
                .isEqualTo(fits);

        ValidationResult r = validate(event(",\"request_id\":\"" + fits + "r\""));
        assertThat(r.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).isEqualTo("request_id is 257 bytes long; at most 256 are accepted");
    }

    static boolean hasUnpairedSurrogate(String s) {
        return s.codePoints().anyMatch(cp -> cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE);
    }

    static String withTs(long ts) {
        return event("").replace("\"event_ts\":" + EVENT_TS, "\"event_ts\":" + ts);
    }
}
