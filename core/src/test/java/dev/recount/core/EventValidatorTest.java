package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class EventValidatorTest {
    /** Kafka record timestamp of every fixture: event times are judged against it, not the wall clock. */
    static final long RECORD_TS = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final long EVENT_TS = Instant.parse("2026-11-29T09:59:30Z").toEpochMilli();

    final EventValidator validator = new EventValidator(Duration.ofDays(7), Duration.ofMinutes(5));

    ValidationResult validate(String json) {
        return validator.validate(json == null ? null : json.getBytes(StandardCharsets.UTF_8), RECORD_TS, "in", 2, 41L);
    }

    static String event(String overrides) {
        return "{\"event_id\":\"e-1\",\"event_type\":\"click\",\"event_ts\":" + EVENT_TS
                + ",\"campaign_id\":\"c-1\",\"channel_id\":\"web\",\"cost_micros\":2500" + overrides + "}";
    }

    @Test
    void acceptsAValidEventAndKeepsItsKafkaCoordinates() {
        ValidationResult r = validate(event(",\"extra\":{\"ignored\":true}"));

        assertThat(r.isValid()).isTrue();
        assertThat(r.event()).isEqualTo(new AdEvent("e-1", EventType.CLICK, EVENT_TS, "c-1", "web", 2500, "in", 2, 41L, RECORD_TS));
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
    @CsvSource(delimiter = '|', value = {
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
        assertThat(validator.validate(event("").getBytes(StandardCharsets.UTF_16BE), RECORD_TS, "in", 0, 0).reason())
                .isEqualTo(InvalidReason.MALFORMED);
        assertThat(validator.validate(event("").getBytes(StandardCharsets.UTF_16LE), RECORD_TS, "in", 0, 0).reason())
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

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
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
    @CsvSource(delimiter = '|', value = {
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

        assertThat(validate(event("").replace("\"c-1\"", "\"" + fits + "\"")).isValid()).isTrue();
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

    static String withTs(long ts) {
        return event("").replace("\"event_ts\":" + EVENT_TS, "\"event_ts\":" + ts);
    }
}
