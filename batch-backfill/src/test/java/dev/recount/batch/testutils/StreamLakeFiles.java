package dev.recount.batch.testutils;

import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT32;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;

import dev.recount.core.lake.LakeColumns;
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
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

/**
 * Parquet files as the stream job's lake sink writes them: parquet-mr, the schema the stream derives from core's
 * {@link LakeColumns} (required columns REQUIRED, strings {@code binary (STRING)}; derived here the same way, as
 * this module cannot depend on streaming-job: Flink and Spark never share a classpath), Snappy, no dictionary for
 * the per-event-unique columns. {@link #SCHEMA} is the first version's (no {@code request_id});
 * {@link #WITH_REQUEST_ID} every column of today's, with an optional {@code request_id}.
 */
public final class StreamLakeFiles {
    public static final MessageType WITH_REQUEST_ID = parquet(LakeColumns.ALL);

    /** The columns before the first nullable one: all a file written before request_id existed has. */
    public static final MessageType SCHEMA =
            parquet(LakeColumns.ALL.stream().takeWhile(c -> !c.nullable()).toList());

    public static final String REQUEST_ID = LakeLayout.REQUEST_ID;

    private static MessageType parquet(List<LakeColumns.Column> columns) {
        Types.MessageTypeBuilder message = Types.buildMessage();
        for (LakeColumns.Column c : columns) {
            Repetition repetition = c.nullable() ? Repetition.OPTIONAL : Repetition.REQUIRED;
            switch (c.type()) {
                case STRING ->
                    message.primitive(BINARY, repetition).as(stringType()).named(c.name());
                case INT32 -> message.primitive(INT32, repetition).named(c.name());
                case INT64 -> message.primitive(INT64, repetition).named(c.name());
            }
        }
        return message.named(LakeColumns.RECORD_NAME);
    }

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
                    if (requestId != null && e.attributes() != null) g.append(LakeLayout.ATTRIBUTES, e.attributes());
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
