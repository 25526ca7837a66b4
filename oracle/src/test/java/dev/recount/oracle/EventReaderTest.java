package dev.recount.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The contract's rules at their edges, one record each (the golden file holds the ordinary cases). */
class EventReaderTest {
    static final long AT = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final EventReader READER = new EventReader(
            Map.of(
                    "country",
                    new Definitions.Attribute("country", true, false, "other", Set.of("DE", "other")),
                    "slot_id",
                    new Definitions.Attribute("slot_id", true, false, "none", Set.of()),
                    "quantity",
                    new Definitions.Attribute("quantity", false, false, 1L, Set.of())),
            OracleSettings.defaults());

    /** A valid impression at {@code AT} with {@code extra} JSON members appended. */
    static String event(String extra) {
        return "{\"event_id\":\"e\",\"event_type\":\"impression\",\"event_ts\":" + AT
                + ",\"campaign_id\":\"c\",\"channel_id\":\"web\",\"cost_micros\":1" + extra + "}";
    }

    static String verdict(String json) {
        return verdict(json, AT);
    }

    static String verdict(String json, long recordTs) {
        EventReader.Reading r = READER.read(json.getBytes(StandardCharsets.UTF_8), recordTs);
        return r.isValid() ? "valid" : r.invalidReason();
    }

    @Test
    void idsAreNonBlankAtMost256Utf8BytesWithoutControlsOrLoneSurrogates() {
        assertThat(verdict(event(",\"request_id\":\"" + "r".repeat(256) + "\"")))
                .isEqualTo("valid");
        assertThat(verdict(event(",\"request_id\":\"" + "r".repeat(257) + "\"")))
                .isEqualTo("schema");
        // 64 four-byte characters are 256 bytes; one more ASCII letter is 257.
        assertThat(verdict(event(",\"request_id\":\"" + "\uD83D\uDE00".repeat(64) + "\"")))
                .isEqualTo("valid");
        assertThat(verdict(event(",\"request_id\":\"" + "\uD83D\uDE00".repeat(64) + "x\"")))
                .isEqualTo("schema");
        assertThat(verdict(event(",\"request_id\":\"  \""))).isEqualTo("schema");
        assertThat(verdict(event(",\"request_id\":\"a\u007Fb\""))).isEqualTo("schema"); // DEL, raw: legal JSON
        assertThat(verdict(event(",\"request_id\":\"a\u0085b\""))).isEqualTo("schema"); // C1, raw
        assertThat(verdict(event(",\"request_id\":\"a\\u0000b\""))).isEqualTo("schema"); // NUL, escaped
        assertThat(verdict(event(",\"request_id\":\"a\\ud83db\""))).isEqualTo("schema"); // lone surrogate
        assertThat(verdict(event(",\"request_id\":\"a\u0001b\""))).isEqualTo("malformed"); // raw C0: not JSON
        assertThat(verdict(event(",\"request_id\":5"))).isEqualTo("schema");
        assertThat(verdict(event(",\"request_id\":null"))).isEqualTo("valid");
    }

    @Test
    void numbersAre64BitJsonIntegersAndCostIsWithinItsRange() {
        assertThat(verdict(event("").replace("\"cost_micros\":1", "\"cost_micros\":1000000000000")))
                .isEqualTo("valid");
        assertThat(verdict(event("").replace("\"cost_micros\":1", "\"cost_micros\":1000000000001")))
                .isEqualTo("schema");
        assertThat(verdict(event("").replace("\"cost_micros\":1", "\"cost_micros\":1.0")))
                .isEqualTo("schema");
        assertThat(verdict(event("").replace("\"cost_micros\":1", "\"cost_micros\":\"1\"")))
                .isEqualTo("schema");
        assertThat(verdict(event("").replace("\"cost_micros\":1", "\"cost_micros\":9223372036854775808")))
                .isEqualTo("schema");
        assertThat(verdict(event("").replace("impression", "view"))).isEqualTo("schema");
    }

    @Test
    void eventTimeIsWithinMaxPastAndMaxFutureOfTheRecordTimestampBoundsIncluded() {
        long past = Duration.ofDays(7).toMillis();
        long future = Duration.ofMinutes(5).toMillis();
        assertThat(verdict(event(""), AT + past)).isEqualTo("valid");
        assertThat(verdict(event(""), AT + past + 1)).isEqualTo("timestamp");
        assertThat(verdict(event(""), AT - future)).isEqualTo("valid");
        assertThat(verdict(event(""), AT - future - 1)).isEqualTo("timestamp");
    }

    @Test
    void eventTimeIsInTheYears0001To9998WhateverTheRecordTimestamp() {
        long end = Instant.parse("9999-01-01T00:00:00Z").toEpochMilli();
        String last = event("").replace("\"event_ts\":" + AT, "\"event_ts\":" + (end - 1));
        String beyond = event("").replace("\"event_ts\":" + AT, "\"event_ts\":" + end);
        assertThat(verdict(last, end)).isEqualTo("valid");
        assertThat(verdict(beyond, end)).isEqualTo("timestamp");
        assertThat(verdict(beyond, Long.MAX_VALUE)).isEqualTo("timestamp");
    }

    @Test
    void malformedBeforeSchemaBeforeTimestamp() {
        String noChannel = event("").replace(",\"channel_id\":\"web\"", "");
        assertThat(verdict(noChannel, AT + Duration.ofDays(30).toMillis())).isEqualTo("schema");
        assertThat(verdict(event("") + " {}")).isEqualTo("malformed"); // a second value after the object
        assertThat(verdict(event("") + " \n")).isEqualTo("valid"); // whitespace after it is fine
        assertThat(verdict("[" + event("") + "]")).isEqualTo("malformed");
        assertThat(verdict(event(",\"x\":{\"a\":1,\"a\":2}"))).isEqualTo("malformed"); // a nested key twice
    }

    @Test
    void declaredAttributesTakeTheirDefaultOrHoldToTheirRule() {
        assertThat(verdict(event(",\"country\":\"DE\",\"slot_id\":\"s\",\"quantity\":0")))
                .isEqualTo("valid");
        assertThat(verdict(event(",\"country\":\"de\""))).isEqualTo("schema"); // not a listed value
        assertThat(verdict(event(",\"slot_id\":\"\""))).isEqualTo("schema"); // an id: not blank
        assertThat(verdict(event(",\"quantity\":-1"))).isEqualTo("schema");
        assertThat(verdict(event(",\"quantity\":9223372036854775808"))).isEqualTo("schema");
        assertThat(verdict(event(",\"quantity\":9223372036854775807"))).isEqualTo("valid");
        Event e = READER.read(event(",\"undeclared\":[1,2]").getBytes(StandardCharsets.UTF_8), AT)
                .event();
        assertThat(e.text("country")).isEqualTo("other");
        assertThat(e.text("slot_id")).isEqualTo("none");
        assertThat(e.number("quantity")).isEqualTo(1L);
        assertThat(e.fields()).doesNotContainKey("undeclared");
    }
}
