package dev.recount.stream.lake;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.impression;
import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT32;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeColumns;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Parquet schema the job writes follows core's {@link LakeColumns}, and the writer fills every column of it: a
 * column added in core that the writer does not write fails here, not in a batch run.
 */
class LakeSchemaTest {
    /**
     * The schema every lake file written so far has (files of the first version end before request_id).
     * Written out literally: these bytes are what existing lakes hold, so no change to core may alter them.
     */
    private static final MessageType WRITTEN_SO_FAR = Types.buildMessage()
            .required(BINARY)
            .as(stringType())
            .named("event_id")
            .required(BINARY)
            .as(stringType())
            .named("event_type")
            .required(INT64)
            .named("event_ts")
            .required(BINARY)
            .as(stringType())
            .named("campaign_id")
            .required(BINARY)
            .as(stringType())
            .named("channel_id")
            .required(INT64)
            .named("cost_micros")
            .required(BINARY)
            .as(stringType())
            .named("kafka_topic")
            .required(INT32)
            .named("kafka_partition")
            .required(INT64)
            .named("kafka_offset")
            .required(INT64)
            .named("record_ts")
            .optional(BINARY)
            .as(stringType())
            .named("request_id")
            .optional(BINARY)
            .as(stringType())
            .named("attributes")
            .named("raw_event");

    @Test
    void everyCoreColumnInOrderWithItsTypeAndNullability() {
        List<Type> fields = LakeSchema.SCHEMA.getFields();
        assertThat(fields).hasSameSizeAs(LakeColumns.ALL);
        for (int i = 0; i < fields.size(); i++) {
            LakeColumns.Column column = LakeColumns.ALL.get(i);
            PrimitiveType field = fields.get(i).asPrimitiveType();
            assertThat(field.getName()).isEqualTo(column.name());
            assertThat(field.getRepetition())
                    .as(column.name())
                    .isEqualTo(column.nullable() ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED);
            switch (column.type()) {
                case STRING -> {
                    assertThat(field.getPrimitiveTypeName()).as(column.name()).isEqualTo(BINARY);
                    assertThat(field.getLogicalTypeAnnotation())
                            .as(column.name())
                            .isEqualTo(stringType());
                }
                case INT32 ->
                    assertThat(field.getPrimitiveTypeName()).as(column.name()).isEqualTo(INT32);
                case INT64 ->
                    assertThat(field.getPrimitiveTypeName()).as(column.name()).isEqualTo(INT64);
            }
            if (column.type() != LakeColumns.Type.STRING)
                assertThat(field.getLogicalTypeAnnotation()).isNull();
        }
        assertThat(LakeSchema.SCHEMA.getName()).isEqualTo(LakeColumns.RECORD_NAME);
    }

    @Test
    void theColumnsOfExistingFilesKeepTheirExactParquetTypes() {
        int written = WRITTEN_SO_FAR.getFieldCount();
        assertThat(LakeSchema.SCHEMA.getFields().subList(0, written)).isEqualTo(WRITTEN_SO_FAR.getFields());
        assertThat(LakeSchema.SCHEMA.getName()).isEqualTo(WRITTEN_SO_FAR.getName());
    }

    @Test
    void theWriterFillsEveryCoreColumn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("part-0.parquet");
        AdEvent event = impression("i1", W0.plusSeconds(2), 18);
        event.requestId = "req-1"; // every column set, the nullable ones too
        event.attributesJson = "{\"slot_id\":\"top\",\"undeclared\":[1,2]}";
        try (FSDataOutputStream out = FileSystem.getLocalFileSystem()
                .create(new org.apache.flink.core.fs.Path(file.toUri()), FileSystem.WriteMode.NO_OVERWRITE)) {
            BulkWriter<AdEvent> writer = new LakeParquetWriterFactory().create(out);
            writer.addElement(event);
            writer.finish();
        }

        org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file.toUri());
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        try (ParquetFileReader footer = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf))) {
            assertThat(footer.getFileMetaData().getSchema()).isEqualTo(LakeSchema.SCHEMA);
        }
        try (ParquetReader<Group> reader = ParquetReader.builder(new GroupReadSupport(), path)
                .withConf(conf)
                .build()) {
            Group row = reader.read();
            for (LakeColumns.Column column : LakeColumns.ALL) {
                assertThat(row.getFieldRepetitionCount(column.name()))
                        .as(column.name() + " written")
                        .isEqualTo(1);
            }
            assertThat(reader.read()).isNull();
        }
    }
}
