package dev.recount.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.DeadLetterRecord;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Property-based fuzzing of core's validator: it is total (any bytes get a verdict, nothing throws), every event it
 * accepts obeys CONTRACT §1 (re-checked by {@link ContractOracle}, which shares no code with it), it rejects for
 * the reason the contract gives, and it accepts every valid record however it is spelled.
 */
class EventValidatorFuzzTest {
    private static final String TOPIC = "ad-events";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** (a) Arbitrary bytes: a verdict, never an exception, and never an accepted event that breaks a rule. */
    @Test
    void anyBytesGetAVerdictAndNothingInvalidIsAccepted() {
        EventValidator validator = new EventValidator(ValidationSettings.defaults());
        Fuzz.check(
                "any bytes",
                2_000,
                r -> new Bytes(HostileJson.anyBytes(r), r.nextLong(0, 4_102_444_800_000L)),
                b -> Fuzz.show(b.value()) + " at record_ts " + b.recordTs(),
                b -> {
                    ValidationResult result = validator.validate(b.value(), b.recordTs(), TOPIC, 1, 7);
                    assertWellFormed(result, b.value());
                    if (result.isValid()) {
                        assertThat(ContractOracle.violations(
                                        result.event(), b.recordTs(), ValidationSettings.defaults()))
                                .as("rules an accepted event breaks")
                                .isEmpty();
                    }
                });
    }

    /**
     * (b) Records that mix the contract's fields with hostile values: the verdict the contract gives, and an accepted
     * record becomes exactly the event it describes.
     */
    @Test
    void hostileRecordsGetTheContractsVerdict() {
        int[] accepted = new int[1];
        int[] byReason = new int[InvalidReason.values().length];
        Fuzz.check("hostile records", 2_000, HostileJson::hostileRecord, EventValidatorFuzzTest::describe, c -> {
            byte[] value = c.bytes();
            ValidationResult result = new EventValidator(c.settings()).validate(value, c.recordTs(), TOPIC, 1, 7);
            assertWellFormed(result, value);
            Optional<InvalidReason> expected = ContractOracle.expectedVerdict(c);
            assertThat(result.isValid() ? Optional.empty() : Optional.of(result.reason()))
                    .as(result.toString())
                    .isEqualTo(expected);
            if (result.isValid()) {
                assertThat(ContractOracle.violations(result.event(), c.recordTs(), c.settings()))
                        .isEmpty();
                assertAcceptedAsDescribed(result.event(), c);
                accepted[0]++;
            } else {
                byReason[result.reason().ordinal()]++;
            }
        });
        // The generator must reach every verdict, or the property proves little.
        assertThat(accepted[0]).as("accepted").isGreaterThan(100);
        assertThat(java.util.Arrays.stream(byReason).boxed())
                .as("rejected by reason (malformed, schema, timestamp)")
                .allMatch(n -> n > 50);
    }

    /** (c) Every valid record is accepted, whatever its spelling, layout, extra fields or optional request_id. */
    @Test
    void validRecordsAreAcceptedAsTheyAre() {
        Fuzz.check("valid records", 1_000, HostileJson::validRecord, EventValidatorFuzzTest::describe, c -> {
            assertThat(ContractOracle.expectedVerdict(c))
                    .as("generator made an invalid record")
                    .isEmpty();
            ValidationResult result = new EventValidator(c.settings()).validate(c.bytes(), c.recordTs(), TOPIC, 1, 7);
            assertThat(result.isValid()).as(result.toString()).isTrue();
            assertAcceptedAsDescribed(result.event(), c);
        });
    }

    /**
     * The event holds the record's contract fields as the oracle reads them, and its attributesJson the record's other
     * members: the same values, parsed (exact decimals) from both texts, whatever their spelling.
     */
    private static void assertAcceptedAsDescribed(AdEvent event, HostileJson.Case c) {
        AdEvent withoutAttributes = event.copy();
        withoutAttributes.attributesJson = null;
        assertThat(withoutAttributes).isEqualTo(ContractOracle.expectedEvent(c, TOPIC, 1, 7));
        byte[] expected = ContractOracle.expectedAttributes(c);
        if (expected == null) {
            assertThat(event.attributesJson).isNull();
        } else {
            assertThat(event.attributesJson).isNotNull();
            try {
                assertThat(EXACT.readTree(event.attributesJson)).isEqualTo(EXACT.readTree(expected));
            } catch (java.io.IOException e) {
                throw new AssertionError("attributesJson is not JSON: " + event.attributesJson, e);
            }
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper EXACT =
            com.fasterxml.jackson.databind.json.JsonMapper.builder()
                    .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                    .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
                    .build();

    /**
     * A verdict is complete, and its dead letter reaches Kafka intact: the detail must not carry an unpaired surrogate,
     * which UTF-8 encoding would turn into '?'.
     */
    private static void assertWellFormed(ValidationResult result, byte[] value) {
        assertThat(result).isNotNull();
        if (result.isValid()) {
            assertThat(result.reason()).isNull();
            AdEvent e = result.event();
            assertThat(e.topic).isEqualTo(TOPIC);
            assertThat(e.partition).isEqualTo(1);
            assertThat(e.offset).isEqualTo(7);
            return;
        }
        assertThat(result.reason()).isNotNull();
        assertThat(result.detail()).isNotBlank();
        assertThat(ContractOracle.hasUnpairedSurrogate(result.detail()))
                .as("detail %s", Fuzz.show(result.detail()))
                .isFalse();
        String deadLetter = DeadLetterRecord.toJson(result.reason(), result.detail(), TOPIC, 1, 7, 0, null, value);
        String sent = new String(deadLetter.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
        try {
            assertThat(JSON.readTree(sent).get("detail").asText()).isEqualTo(result.detail());
        } catch (java.io.IOException e) {
            throw new AssertionError("dead letter is not JSON: " + Fuzz.show(sent), e);
        }
    }

    private static String describe(HostileJson.Case c) {
        return Fuzz.show(c.bytes()) + " at record_ts " + c.recordTs() + ", max cost "
                + c.settings().maxCostMicros();
    }

    private record Bytes(byte[] value, long recordTs) {}
}
