package dev.recount.stream.testutils;

import dev.recount.core.event.EventValidator;
import dev.recount.stream.source.ParsedRecord;
import dev.recount.stream.source.ValidatingDeserializer;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * A bounded input of Kafka records held in memory, in the job's input type: each record (raw bytes with its topic,
 * partition, offset and record timestamp) goes through the job's own {@link ValidatingDeserializer} inside the
 * source, as the Kafka source does, so what reaches {@code StreamJob.build} is exactly what Kafka would have given it.
 *
 * <p>Flink's {@link DataGeneratorSource} emits the records in list order (at parallelism 1 it has one split). It
 * sets no record timestamp, which only invalid records would use (they go to the dead-letter sink, where event time
 * plays no role); valid ones are stamped with their event_ts by the job's watermark strategy.
 */
public final class InMemoryKafkaInput {
    private InMemoryKafkaInput() {}

    /** One Kafka record as the consumer would read it. {@code key} and {@code value} may be null. */
    public record Record(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value)
            implements Serializable {
        public Record {
            Objects.requireNonNull(topic, "topic");
        }

        ConsumerRecord<byte[], byte[]> toConsumerRecord() {
            return new ConsumerRecord<>(
                    topic,
                    partition,
                    offset,
                    timestamp,
                    TimestampType.CREATE_TIME,
                    key == null ? -1 : key.length,
                    value == null ? -1 : value.length,
                    key,
                    value,
                    new RecordHeaders(),
                    Optional.empty());
        }
    }

    /** A bounded source of {@code records}, validated with {@code validator}, in list order. */
    public static DataGeneratorSource<ParsedRecord> source(List<Record> records, EventValidator validator) {
        Objects.requireNonNull(records, "records");
        if (records.isEmpty()) throw new IllegalArgumentException("records must not be empty");
        return new DataGeneratorSource<>(
                new Deserialize(List.copyOf(records), new ValidatingDeserializer(validator)),
                records.size(),
                TypeInformation.of(ParsedRecord.class));
    }

    /** Record number i, through the job's deserializer. */
    private static final class Deserialize implements GeneratorFunction<Long, ParsedRecord> {
        private static final long serialVersionUID = 1L;
        private final List<Record> records;
        private final ValidatingDeserializer deserializer;

        Deserialize(List<Record> records, ValidatingDeserializer deserializer) {
            this.records = records;
            this.deserializer = deserializer;
        }

        @Override
        public ParsedRecord map(Long index) throws Exception {
            List<ParsedRecord> out = new ArrayList<>(1);
            deserializer.deserialize(records.get(Math.toIntExact(index)).toConsumerRecord(), new Collector<>() {
                @Override
                public void collect(ParsedRecord record) {
                    out.add(record);
                }

                @Override
                public void close() {}
            });
            if (out.size() != 1) {
                throw new IllegalStateException("the deserializer gave " + out.size() + " results for record " + index
                        + "; expected exactly one");
            }
            return out.get(0);
        }
    }
}
