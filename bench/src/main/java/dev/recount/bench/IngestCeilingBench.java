package dev.recount.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
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
 * (c) The ingest ceiling: the same bounded Kafka source at parallelism 2, each record parsed into core's AdEvent
 * (Jackson tree + EventJson.fromNode, as the shipped deserializer starts), then discarded. No state, no sink I/O.
 * Args: topic [parallelism]. Prints {@code RESULT ingest-ceiling <records> <seconds>}.
 */
public final class IngestCeilingBench {
    public static void main(String[] args) throws Exception {
        String topic = args[0];
        int parallelism = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        long records = Topics.records(bootstrap, topic);
        Configuration conf = new Configuration();
        conf.setString("rest.port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        KafkaSource<AdEvent> source = KafkaSource.<AdEvent>builder()
                .setBootstrapServers(bootstrap).setTopics(topic).setGroupId("bench-ingest")
                .setStartingOffsets(OffsetsInitializer.earliest()).setBounded(OffsetsInitializer.latest())
                .setDeserializer(new Parse())
                .build();
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-parse").uid("kafka-parse")
                .sinkTo(new DiscardingSink<>()).name("discard").uid("discard");
        long t0 = System.nanoTime();
        env.execute("ingest-ceiling");
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "RESULT ingest-ceiling %d %.2f%n", records, seconds);
        System.exit(0);
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
