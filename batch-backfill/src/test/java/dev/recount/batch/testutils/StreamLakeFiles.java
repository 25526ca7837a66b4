package dev.recount.batch.testutils;

import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT32;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;

import dev.recount.core.lake.LakeLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.List;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Types;

/**
 * Parquet files as the stream job's lake sink writes them: parquet-mr, the stream's schema with every column
 * REQUIRED (a copy of streaming-job's LakeSchema, which this module cannot depend on: Flink and Spark never share a
 * classpath), Snappy, no dictionary for the per-event-unique columns. {@link #WITH_REQUEST_ID} is the same schema
 * plus an optional {@code request_id}, as a later version of the job may write it.
 */
public final class StreamLakeFiles {
    public static final MessageType SCHEMA = Types.buildMessage()
            .required(BINARY).as(stringType()).named(LakeLayout.EVENT_ID)
            .required(BINARY).as(stringType()).named(LakeLayout.EVENT_TYPE)
            .required(INT64).named(LakeLayout.EVENT_TS)
            .required(BINARY).as(stringType()).named(LakeLayout.CAMPAIGN_ID)
            .required(BINARY).as(stringType()).named(LakeLayout.CHANNEL_ID)
            .required(INT64).named(LakeLayout.COST_MICROS)
            .required(BINARY).as(stringType()).named(LakeLayout.KAFKA_TOPIC)
            .required(INT32).named(LakeLayout.KAFKA_PARTITION)
            .required(INT64).named(LakeLayout.KAFKA_OFFSET)
            .required(INT64).named(LakeLayout.RECORD_TS)
            .named("raw_event");

    public static final String REQUEST_ID = "request_id";

    public static final MessageType WITH_REQUEST_ID = Types.buildMessage()
            .addFields(SCHEMA.getFields().toArray(org.apache.parquet.schema.Type[]::new))
            .optional(BINARY).as(stringType()).named(REQUEST_ID)
            .named("raw_event");

    private StreamLakeFiles() {}

    /** Writes {@code events} to {@code target} (a local file); {@code requestId} null: the stream's plain schema. */
    public static void write(java.nio.file.Path target, List<LakeEvent> events, Function<LakeEvent, String> requestId) {
        MessageType schema = requestId == null ? SCHEMA : WITH_REQUEST_ID;
        SimpleGroupFactory groups = new SimpleGroupFactory(schema);
        try {
            // Written beside, then moved: Hadoop's local file system would leave a .crc file next to it.
            java.nio.file.Path tmp = Files.createTempDirectory("stream-file-").resolve("f.parquet");
            try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new org.apache.hadoop.fs.Path(tmp.toUri()))
                    .withConf(new Configuration())
                    .withType(schema)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                    .withDictionaryEncoding(LakeLayout.EVENT_ID, false)
                    .withDictionaryEncoding(LakeLayout.EVENT_TS, false)
                    .withDictionaryEncoding(LakeLayout.KAFKA_OFFSET, false)
                    .withDictionaryEncoding(LakeLayout.RECORD_TS, false)
                    .build()) {
                for (LakeEvent e : events) {
                    Group g = groups.newGroup()
                            .append(LakeLayout.EVENT_ID, e.eventId())
                            .append(LakeLayout.EVENT_TYPE, e.eventType())
                            .append(LakeLayout.EVENT_TS, e.eventTs())
                            .append(LakeLayout.CAMPAIGN_ID, e.campaignId())
                            .append(LakeLayout.CHANNEL_ID, e.channelId())
                            .append(LakeLayout.COST_MICROS, e.costMicros())
                            .append(LakeLayout.KAFKA_TOPIC, e.topic())
                            .append(LakeLayout.KAFKA_PARTITION, e.partition())
                            .append(LakeLayout.KAFKA_OFFSET, e.offset())
                            .append(LakeLayout.RECORD_TS, e.recordTs());
                    String id = requestId == null ? null : requestId.apply(e);
                    if (id != null) g.append(REQUEST_ID, id);
                    w.write(g);
                }
            }
            Files.createDirectories(target.getParent());
            Files.move(tmp, target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
