package dev.recount.stream.source;

import dev.recount.core.event.DeadLetterRecord;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Turns every Kafka record into a {@link ParsedRecord} with core's {@link EventValidator}, judging event_ts against
 * the Kafka record timestamp (CONTRACT §1). It never throws on input: whatever the bytes are (null, not UTF-8,
 * 1 MB, numbers beyond long, a key of any length), the result is a valid event or a dead letter small enough to
 * publish, so bad input cannot fail the job.
 */
public final class ValidatingDeserializer implements KafkaRecordDeserializationSchema<ParsedRecord> {
    private static final long serialVersionUID = 1L;

    private final EventValidator validator;

    public ValidatingDeserializer(EventValidator validator) {
        this.validator = Objects.requireNonNull(validator, "validator");
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<ParsedRecord> out) {
        out.collect(parse(record));
    }

    ParsedRecord parse(ConsumerRecord<byte[], byte[]> record) {
        ValidationResult result;
        try {
            result = validator.validate(
                    record.value(), record.timestamp(), record.topic(), record.partition(), record.offset());
        } catch (RuntimeException e) {
            // The validator is meant to be total; if some input still trips it, that input is malformed, and the
            // job must keep running rather than fail over the same record forever.
            result = ValidationResult.invalid(InvalidReason.MALFORMED, "could not be parsed: " + e);
        }
        if (result.isValid()) return ParsedRecord.valid(result.event());
        String json = DeadLetterRecord.toJson(
                result.reason(),
                result.detail(),
                record.topic(),
                record.partition(),
                record.offset(),
                record.timestamp(),
                record.key(),
                record.value());
        return ParsedRecord.invalid(new DeadLetter(result.reason(), json, DeadLetterRecord.key(record.key())));
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }
}
