package dev.recount.stream.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.DeadLetterRecord;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class ValidatingDeserializerTest {
    private static final long RECORD_TS = Instant.parse("2026-11-29T10:00:01Z").toEpochMilli();
    private static final String VALID = "{\"event_id\":\"e1\",\"event_type\":\"click\",\"event_ts\":"
            + Instant.parse("2026-11-29T10:00:00Z").toEpochMilli()
            + ",\"campaign_id\":\"camp-a\",\"channel_id\":\"search\",\"cost_micros\":250000}";

    private final ValidatingDeserializer deserializer =
            new ValidatingDeserializer(new EventValidator(ValidationSettings.defaults()));

    @Test
    void validRecordsBecomeEventsWithTheirKafkaCoordinates() {
        ParsedRecord r = parse(VALID.getBytes(StandardCharsets.UTF_8));
        assertThat(r.isValid()).isTrue();
        assertThat(r.event.eventType).isEqualTo(EventType.CLICK);
        assertThat(r.event.partition).isEqualTo(2);
        assertThat(r.event.offset).isEqualTo(42);
        assertThat(r.event.recordTs).isEqualTo(RECORD_TS);
    }

    @Test
    void badInputBecomesADeadLetterWithItsReasonAndCoordinates() throws Exception {
        byte[] big = new byte[1024 * 1024];
        Arrays.fill(big, (byte) 'x');
        assertDead(null, InvalidReason.MALFORMED);
        assertDead(new byte[] {(byte) 0xc3, (byte) 0x28}, InvalidReason.MALFORMED);
        assertDead(big, InvalidReason.MALFORMED);
        assertDead("[1,2]".getBytes(StandardCharsets.UTF_8), InvalidReason.MALFORMED);
        assertDead(
                VALID.replace("250000", "99999999999999999999999").getBytes(StandardCharsets.UTF_8),
                InvalidReason.SCHEMA);
        assertDead(VALID.replace("\"click\"", "\"tap\"").getBytes(StandardCharsets.UTF_8), InvalidReason.SCHEMA);
        assertDead(
                VALID.replace("\"event_ts\":", "\"event_ts\":1").getBytes(StandardCharsets.UTF_8),
                InvalidReason.TIMESTAMP);
    }

    /**
     * A key of any length and a value whose raw copy is six times its size (a control byte is a six-byte JSON escape):
     * any producer can send this in one record under Kafka's default 1 MiB limit. Its dead letter must fit that limit
     * too, or its checkpoint could never be published.
     */
    @Test
    void aDeadLetterFitsKafkasDefaultLimitWhateverTheKeyAndValue() throws Exception {
        byte[] key = new byte[700_000];
        Arrays.fill(key, (byte) 'k');
        byte[] controls = new byte[65_536];
        Arrays.fill(controls, (byte) 1);
        ParsedRecord r = parse(key, controls);
        assertThat(r.isValid()).isFalse();
        assertThat(r.deadLetter.key).hasSize(DeadLetterRecord.MAX_KEY_BYTES).containsOnly((byte) 'k');
        byte[] value = r.deadLetter.json.getBytes(StandardCharsets.UTF_8);
        assertThat(r.deadLetter.key.length + value.length).isLessThan(1024 * 1024 - 1024);
        JsonNode json = new ObjectMapper().readTree(value);
        assertThat(json.get("key_truncated").asBoolean()).isTrue();
        assertThat(json.get("key_bytes").asInt()).isEqualTo(700_000);
        assertThat(json.get("raw").asText()).hasSize(DeadLetterRecord.MAX_RAW_CHARS);
    }

    private void assertDead(byte[] value, InvalidReason reason) throws Exception {
        ParsedRecord r = parse(value);
        assertThat(r.isValid()).isFalse();
        assertThat(r.deadLetter.reason).isEqualTo(reason);
        assertThat(r.deadLetter.key).isEqualTo("camp-a".getBytes(StandardCharsets.UTF_8));
        JsonNode json = new ObjectMapper().readTree(r.deadLetter.json);
        assertThat(json.get("reason").asText()).isEqualTo(reason.wireName());
        assertThat(json.get("topic").asText()).isEqualTo("ad-events");
        assertThat(json.get("partition").asInt()).isEqualTo(2);
        assertThat(json.get("offset").asLong()).isEqualTo(42);
        assertThat(json.get("record_ts").asLong()).isEqualTo(RECORD_TS);
        assertThat(json.has("raw")).isTrue();
    }

    private ParsedRecord parse(byte[] value) {
        return parse("camp-a".getBytes(StandardCharsets.UTF_8), value);
    }

    private ParsedRecord parse(byte[] key, byte[] value) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(
                "ad-events",
                2,
                42,
                RECORD_TS,
                org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                0,
                value == null ? 0 : value.length,
                key,
                value,
                new org.apache.kafka.common.header.internals.RecordHeaders(),
                java.util.Optional.empty());
        return deserializer.parse(record);
    }
}
