package dev.recount.bench.kstreams;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.ValidationResult;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Parses and validates each input record with core's {@link EventValidator} (the rules of the contract, judged
 * against the Kafka record timestamp, as the shipped job does) and forwards each valid event keyed by its event_id,
 * stamped with its event time: from here on Kafka Streams' stream time is event time. Invalid records are dropped
 * (a user would send them to a dead-letter topic; the Flink SQL peer drops them too).
 */
final class ValidateEvents implements Processor<byte[], byte[], String, AdEvent> {
    private final EventValidator validator;
    private final RunProgress progress;
    private ProcessorContext<String, AdEvent> context;

    ValidateEvents(EventValidator validator, RunProgress progress) {
        this.validator = validator;
        this.progress = progress;
    }

    @Override
    public void init(ProcessorContext<String, AdEvent> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        progress.read.increment();
        RecordMetadata source = context.recordMetadata().orElseThrow();
        ValidationResult result = validator.validate(
                record.value(), record.timestamp(), source.topic(), source.partition(), source.offset());
        if (!result.isValid()) return;
        progress.valid.increment();
        AdEvent event = result.event();
        context.forward(new Record<>(event.eventId, event, event.eventTs));
    }
}
