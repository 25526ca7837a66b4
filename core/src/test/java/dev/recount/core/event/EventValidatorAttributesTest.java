package dev.recount.core.event;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.sets.AttributeResolver;
import dev.recount.core.sets.MetricSets;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Declared attributes: validated, defaulted, carried; every field beyond the contract kept for the lake. */
class EventValidatorAttributesTest {
    private static final long TS = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    private static final MetricSets DEFINITIONS = MetricSets.parse("""
            version: 1
            attributes:
              slot_id: {type: string, default: none}
              country: {type: string, values: [DE, FR], default: DE}
              device: {type: string, required: true}
              quantity: {type: integer, default: 7}
            sets: []
            """, "sets.yaml", RecountConfig.defaults());
    private static final EventValidator VALIDATOR =
            new EventValidator(ValidationSettings.defaults(), DEFINITIONS.attributes());

    private static final String CONTRACT = "\"event_id\":\"e1\",\"event_type\":\"click\",\"event_ts\":" + TS
            + ",\"campaign_id\":\"c\",\"channel_id\":\"h\",\"cost_micros\":5";

    private static ValidationResult validate(String extra) {
        String json = "{" + CONTRACT + (extra.isEmpty() ? "" : "," + extra) + "}";
        return VALIDATOR.validate(json.getBytes(StandardCharsets.UTF_8), TS, "t", 0, 0);
    }

    @Test
    void declaredAttributesAreReadAndAbsentOnesTakeTheirDefault() {
        ValidationResult r = validate("\"device\":\"ios\",\"slot_id\":\"top\",\"quantity\":3");

        assertThat(r.isValid()).isTrue();
        assertThat(r.event().stringAttributes).containsExactly("top", "DE", "ios");
        assertThat(r.event().integerAttributes).containsExactly(3L);
        assertThat(r.event().attributesJson).isEqualTo("{\"device\":\"ios\",\"slot_id\":\"top\",\"quantity\":3}");
    }

    @Test
    void nullCountsAsAbsent() {
        ValidationResult r = validate("\"device\":\"ios\",\"slot_id\":null,\"quantity\":null");

        assertThat(r.event().stringAttributes).containsExactly("none", "DE", "ios");
        assertThat(r.event().integerAttributes).containsExactly(7L);
    }

    @Test
    void everyFieldBeyondTheContractIsKeptDeclaredOrNotNestedOrNot() {
        ValidationResult r = validate("\"device\":\"web\",\"browser\":{\"name\":\"x\",\"v\":[1,2.50]},\"ab\":true");

        assertThat(r.isValid()).isTrue();
        assertThat(r.event().attributesJson)
                .isEqualTo("{\"device\":\"web\",\"browser\":{\"name\":\"x\",\"v\":[1,2.50]},\"ab\":true}");
    }

    /**
     * A record with fields beyond the contract, scalar or nested, in the middle or at the end, is taken by the fast
     * path with the same event the tree path makes: such records are the common case once sets use attributes.
     */
    @Test
    void theFastPathTakesRecordsWithFieldsBeyondTheContract() {
        for (String json : new String[] {
            "{\"device\":\"ios\",\"slot_id\":\"top\"," + CONTRACT + ",\"quantity\":3}",
            "{" + CONTRACT + ",\"device\":\"web\",\"browser\":{\"name\":\"x\",\"v\":[1,2.50]},\"ab\":true}",
        }) {
            byte[] value = json.getBytes(StandardCharsets.UTF_8);
            AdEvent fast = VALIDATOR.acceptFastForTest(value, TS);
            assertThat(fast).as(json).isNotNull();
            AdEvent full = VALIDATOR.validate(value, TS, "t", 0, 0).event();
            assertThat(fast.attributesJson).as(json).isEqualTo(full.attributesJson);
            assertThat(fast.stringAttributes).as(json).containsExactly(full.stringAttributes);
            assertThat(fast.integerAttributes).as(json).containsExactly(full.integerAttributes);
        }
    }

    @Test
    void aMissingRequiredAttributeIsASchemaDeadLetter() {
        ValidationResult r = validate("\"slot_id\":\"top\"");

        assertThat(r.reason()).isEqualTo(InvalidReason.SCHEMA);
        assertThat(r.detail()).isEqualTo("device is missing; it is a required attribute (metric-sets file)");
    }

    @Test
    void aValueOutsideItsRuleIsASchemaDeadLetter() {
        assertThat(validate("\"device\":\"ios\",\"country\":\"US\"").detail())
                .isEqualTo("country 'US' is not one of [DE, FR]");
        assertThat(validate("\"device\":\"ios\",\"slot_id\":\"a\\u0000b\"").detail())
                .isEqualTo("slot_id has control character U+0000 at index 1 in 'a\\u0000b'");
        assertThat(validate("\"device\":\"ios\",\"slot_id\":5").detail())
                .isEqualTo("slot_id must be a string, got number");
        assertThat(validate("\"device\":\"ios\",\"quantity\":-1").detail())
                .isEqualTo("quantity -1 is not a whole number in [0, 2^63)");
        assertThat(validate("\"device\":\"ios\",\"quantity\":1.5").detail())
                .isEqualTo("quantity must be an integer, got 1.5");
        assertThat(validate("\"device\":\"ios\",\"quantity\":\"3\"").detail())
                .isEqualTo("quantity must be a JSON integer, not a string");
    }

    @Test
    void withoutDeclaredAttributesExtraFieldsAreStillKept() {
        EventValidator plain = new EventValidator(ValidationSettings.defaults());
        ValidationResult r = plain.validate(
                ("{" + CONTRACT + ",\"slot_id\":\"top\"}").getBytes(StandardCharsets.UTF_8), TS, "t", 0, 0);

        assertThat(r.event().stringAttributes).isNull();
        assertThat(r.event().attributesJson).isEqualTo("{\"slot_id\":\"top\"}");
        assertThat(plain.validate(("{" + CONTRACT + "}").getBytes(StandardCharsets.UTF_8), TS, "t", 0, 0)
                        .event()
                        .attributesJson)
                .isNull();
    }

    @Test
    void theBatchLayerResolvesTheLakesColumnByTheSameRule() {
        AttributeResolver resolver = new AttributeResolver(DEFINITIONS.attributes());

        AttributeResolver.Resolved ok = resolver.resolve("{\"device\":\"web\",\"quantity\":3,\"other\":[1]}");
        assertThat(ok.isValid()).isTrue();
        assertThat(ok.strings()).containsExactly("none", "DE", "web");
        assertThat(ok.integers()).containsExactly(3L);
        assertThat(resolver.resolve((String) null).problem())
                .isEqualTo("device is missing; it is a required attribute (metric-sets file)");
        assertThat(resolver.resolve("{\"device\":7}").problem()).isEqualTo("device must be a string, got number");
        assertThat(resolver.resolve("[1]").problem()).isEqualTo("attributes is not a JSON object");
    }
}
