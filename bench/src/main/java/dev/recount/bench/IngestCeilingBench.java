package dev.recount.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.ValidationResult;
import java.util.Locale;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * (c) The ingest ceiling: the same bounded Kafka source at parallelism 2, each record parsed into core's AdEvent,
 * then discarded. No state, no sink I/O. Two parsers: {@code tree} (Jackson tree + EventJson.fromNode, the ceiling
 * as first defined) and {@code validator} (core's EventValidator, exactly the parse and checks the shipped job
 * does; invalid records are discarded too). The faster one is the ceiling that counts.
 * Args: topic [parallelism] [tree|validator]. Prints {@code RESULT ingest-ceiling[-validator] <records> <seconds>}.
 */
public final class IngestCeilingBench {
    public static void main(String[] args) throws Exception {
        String topic = args[0];
        int parallelism = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        boolean validator = args.length > 2 && args[2].equals("validator");
        String name = validator ? "ingest-ceiling-validator" : "ingest-ceiling";
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        long records = Topics.records(bootstrap, topic);
        Configuration conf = new Configuration();
        conf.setString("rest.port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        KafkaSource<AdEvent> source = KafkaSource.<AdEvent>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topic)
                .setGroupId("bench-ingest")
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setBounded(OffsetsInitializer.latest())
                .setDeserializer(validator ? new Validate() : new Parse())
                .build();
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-parse")
                .uid("kafka-parse")
                .sinkTo(new DiscardingSink<>())
                .name("discard")
                .uid("discard");
        long t0 = System.nanoTime();
        env.execute(name);
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "RESULT %s %d %.2f%n", name, records, seconds);
        System.exit(0);
    }

    /** Validates with core's EventValidator (defaults), as the shipped job's deserializer does; emits valid events. */
    static final class Validate implements KafkaRecordDeserializationSchema<AdEvent> {
        private final EventValidator validator = new EventValidator(ValidationSettings.defaults());

        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<AdEvent> out) {
            ValidationResult r = validator.validate(
                    record.value(), record.timestamp(), record.topic(), record.partition(), record.offset());
            if (r.isValid()) out.collect(r.event());
        }

        @Override
        public TypeInformation<AdEvent> getProducedType() {
            return TypeInformation.of(AdEvent.class);
        }
    }

    /** Parses in the source's deserializer (as the shipped job does), so the only downstream cost is the hand-over. */
    static final class Parse implements KafkaRecordDeserializationSchema<AdEvent> {
        private transient ObjectMapper mapper;

        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<AdEvent> out) {
            if (record.value() == null) return;
            if (mapper == null) mapper = new ObjectMapper();
            try {
                out.collect(EventJson.fromNode(mapper.readTree(record.value())));
            } catch (Exception malformed) {
                // discarded, like everything else here
            }
        }

        @Override
        public TypeInformation<AdEvent> getProducedType() {
            return TypeInformation.of(AdEvent.class);
        }
    }
}
