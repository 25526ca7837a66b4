package dev.recount.batch;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroup;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Writes one compacted file from some of an hour's small files: every row of every input, unchanged, with the
 * inputs' own schema ({@link LakeFileSchemas#merge}), Snappy like the stream job, dictionary encoding where the
 * inputs used it. Runs inside a Spark task (one per output file), so a day's hours are rewritten in parallel
 * and, on a cluster, next to the data.
 *
 * <p>Rows are copied as Parquet records, not through Spark rows: whatever columns the files have (an added
 * optional column included) and their exact types and repetition come out as they went in. The output is
 * checked before it counts: its footer must hold exactly as many rows as the inputs' footers.
 */
final class HourRewrite {
    /** What one task writes: {@code inputs} into the hidden {@code staged} file. Paths are fully qualified URIs. */
    record Task(String hourId, List<String> inputs, String staged) implements Serializable {
        private static final long serialVersionUID = 1L;

        Task {
            if (inputs.isEmpty()) throw new IllegalArgumentException("inputs must not be empty");
            inputs = List.copyOf(inputs);
        }
    }

    /** The outcome of a task; {@code error} is null when the staged file is complete and checked. */
    record Result(String hourId, String staged, long rows, long bytes, String error) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    private HourRewrite() {}

    /** Runs one task; failures are returned, not thrown, so one broken hour does not stop the others. */
    static Result run(Task task, Map<String, String> hadoopSettings) {
        Configuration conf = new Configuration(false);
        hadoopSettings.forEach(conf::set);
        try {
            long rows = write(task, conf);
            Path staged = new Path(task.staged());
            long bytes = staged.getFileSystem(conf).getFileStatus(staged).getLen();
            return new Result(task.hourId(), task.staged(), rows, bytes, null);
        } catch (IOException | RuntimeException e) {
            return new Result(task.hourId(), task.staged(), 0, 0, RunLifecycle.oneLine(e));
        }
    }

    private static long write(Task task, Configuration conf) throws IOException {
        List<ParquetMetadata> footers = new ArrayList<>();
        List<MessageType> schemas = new ArrayList<>();
        long expected = 0;
        for (String input : task.inputs()) {
            try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(input), conf))) {
                footers.add(r.getFooter());
                schemas.add(r.getFooter().getFileMetaData().getSchema());
                expected += r.getRecordCount();
            } catch (IOException | RuntimeException e) {
                throw new IOException("cannot read " + input + " as Parquet: " + RunLifecycle.oneLine(e), e);
            }
        }
        MessageType schema = LakeFileSchemas.merge(schemas);
        boolean sameSchemaEverywhere = schemas.stream().allMatch(schema::equals);

        Path staged = new Path(task.staged());
        long written = 0;
        ExampleParquetWriter.Builder builder = ExampleParquetWriter.builder(rawOutput(staged, conf))
                .withConf(conf)
                .withType(schema)
                .withWriteMode(ParquetFileWriter.Mode.CREATE)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withWriterVersion(ParquetProperties.WriterVersion.PARQUET_1_0)
                .withExtraMetaData(sameSchemaEverywhere ? commonKeyValues(footers) : Map.of());
        dictionaryAsInInputs(footers).forEach(builder::withDictionaryEncoding);
        try (ParquetWriter<Group> out = builder.build()) {
            for (String input : task.inputs()) {
                try (ParquetReader<Group> in = ParquetReader.builder(new GroupReadSupport(), new Path(input))
                        .withConf(conf)
                        .build()) {
                    for (Group g = in.read(); g != null; g = in.read()) {
                        out.write(sameSchemaEverywhere ? g : convert(g, schema));
                        written++;
                    }
                }
            }
        }
        long inFooter;
        try (ParquetFileReader check = ParquetFileReader.open(HadoopInputFile.fromPath(staged, conf))) {
            inFooter = check.getRecordCount();
        }
        if (written != expected || inFooter != expected) {
            throw new IOException("hour " + task.hourId() + ": the inputs hold " + expected + " rows but " + written
                    + " were copied and the compacted file says " + inFooter);
        }
        return expected;
    }

    /**
     * Per column, dictionary encoding on if any input used it: the stream job leaves it off for the columns that
     * are unique per event (building a dictionary that is then abandoned only costs time) and on for the others.
     */
    private static Map<String, Boolean> dictionaryAsInInputs(List<ParquetMetadata> footers) {
        Map<String, Boolean> dictionary = new HashMap<>();
        for (ParquetMetadata footer : footers) {
            for (BlockMetaData block : footer.getBlocks()) {
                for (ColumnChunkMetaData column : block.getColumns()) {
                    boolean used = column.getEncodings().contains(Encoding.PLAIN_DICTIONARY)
                            || column.getEncodings().contains(Encoding.RLE_DICTIONARY);
                    dictionary.merge(column.getPath().toDotString(), used, Boolean::logicalOr);
                }
            }
        }
        return dictionary;
    }

    /** The key-value metadata every input carries with the same value (e.g. the writer's own schema notes). */
    private static Map<String, String> commonKeyValues(List<ParquetMetadata> footers) {
        Map<String, String> common =
                new LinkedHashMap<>(footers.get(0).getFileMetaData().getKeyValueMetaData());
        for (ParquetMetadata f : footers) {
            Map<String, String> kv = f.getFileMetaData().getKeyValueMetaData();
            common.entrySet().removeIf(e -> !e.getValue().equals(kv.get(e.getKey())));
        }
        // Parquet records the writer's object model itself.
        common.remove("writer.model.name");
        return common;
    }

    /** A record of one input schema as a record of the merged one: same columns by name, absent ones left null. */
    static Group convert(Group from, GroupType to) {
        SimpleGroup g = new SimpleGroup(to);
        copyFields(from, g);
        return g;
    }

    private static void copyFields(Group from, Group to) {
        GroupType source = from.getType();
        GroupType target = to.getType();
        for (int i = 0; i < target.getFieldCount(); i++) {
            Type field = target.getType(i);
            if (!source.containsField(field.getName())) continue;
            int s = source.getFieldIndex(field.getName());
            for (int r = 0; r < from.getFieldRepetitionCount(s); r++) {
                if (!field.isPrimitive()) {
                    copyFields(from.getGroup(s, r), to.addGroup(i));
                    continue;
                }
                switch (field.asPrimitiveType().getPrimitiveTypeName()) {
                    case INT32 -> to.add(i, from.getInteger(s, r));
                    case INT64 -> to.add(i, from.getLong(s, r));
                    case BOOLEAN -> to.add(i, from.getBoolean(s, r));
                    case FLOAT -> to.add(i, from.getFloat(s, r));
                    case DOUBLE -> to.add(i, from.getDouble(s, r));
                    case INT96 -> to.add(i, from.getInt96(s, r));
                    case BINARY, FIXED_LEN_BYTE_ARRAY -> to.add(i, from.getBinary(s, r));
                }
            }
        }
    }

    /**
     * The file's bytes reach the disk before it is closed: the journal that makes it replace the small files is
     * written after this task returns, and must never name a file a host crash could leave empty or short.
     */
    private static PositionOutputStream syncedOnClose(FSDataOutputStream out) {
        return new PositionOutputStream() {
            @Override
            public long getPos() {
                return out.getPos();
            }

            @Override
            public void write(int b) throws IOException {
                out.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void flush() throws IOException {
                out.flush();
            }

            @Override
            public void close() throws IOException {
                try (out) {
                    out.hsync();
                }
            }
        };
    }

    /** Writes through the raw local file system (no .crc beside the file); other file systems as they are. */
    private static OutputFile rawOutput(Path path, Configuration conf) throws IOException {
        FileSystem fs = path.getFileSystem(conf);
        FileSystem target = fs instanceof ChecksumFileSystem checksummed ? checksummed.getRawFileSystem() : fs;
        return new OutputFile() {
            @Override
            public PositionOutputStream create(long blockSizeHint) throws IOException {
                return syncedOnClose(target.create(path, false));
            }

            @Override
            public PositionOutputStream createOrOverwrite(long blockSizeHint) throws IOException {
                return syncedOnClose(target.create(path, true));
            }

            @Override
            public boolean supportsBlockSize() {
                return false;
            }

            @Override
            public long defaultBlockSize() {
                return 0;
            }

            @Override
            public String getPath() {
                return path.toString();
            }
        };
    }
}
