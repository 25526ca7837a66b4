package dev.recount.stream.testutils;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import dev.recount.stream.lake.LakeParquetWriterFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/** Reads the committed lake back, as the batch layer would: visible *.parquet files only, never in-progress ones. */
public final class LakeFiles {
    private LakeFiles() {}

    public record LakeRow(String partitionPath, GenericRecord record) {
        public String get(String column) {
            Object v = record.get(column);
            return v == null ? null : v.toString();
        }
    }

    /** Writes {@code events} into one new lake file with the job's writer and reads them back, in order. */
    public static List<GenericRecord> writeAndRead(List<AdEvent> events, Path file) throws IOException {
        try (FSDataOutputStream out = newFile(file)) {
            BulkWriter<AdEvent> writer = new LakeParquetWriterFactory().create(out);
            for (AdEvent e : events) writer.addElement(e);
            writer.finish();
        }
        List<GenericRecord> records = new ArrayList<>();
        try (ParquetReader<GenericRecord> reader = reader(file)) {
            for (GenericRecord r = reader.read(); r != null; r = reader.read()) records.add(r);
        }
        return records;
    }

    /** A new local file as Flink's sink opens one, for a lake writer to write. */
    public static FSDataOutputStream newFile(Path file) throws IOException {
        return FileSystem.getLocalFileSystem()
                .create(new org.apache.flink.core.fs.Path(file.toUri()), FileSystem.WriteMode.NO_OVERWRITE);
    }

    private static ParquetReader<GenericRecord> reader(Path file) throws IOException {
        return AvroParquetReader.<GenericRecord>builder(HadoopInputFile.fromPath(
                        new org.apache.hadoop.fs.Path(file.toUri()), new org.apache.hadoop.conf.Configuration()))
                .build();
    }

    /** The lake's committed rows per hour start ({@link LakeLayout#hourStart} of their event time). */
    public static SortedMap<Long, Long> rowsByHour(Path lake) throws IOException {
        SortedMap<Long, Long> rows = new TreeMap<>();
        for (LakeRow r : read(lake)) {
            rows.merge(LakeLayout.hourStart(Long.parseLong(r.get(LakeLayout.EVENT_TS))), 1L, Long::sum);
        }
        return rows;
    }

    public static List<LakeRow> read(Path lake) throws IOException {
        List<LakeRow> rows = new ArrayList<>();
        if (!Files.exists(lake)) return rows;
        List<Path> files;
        try (Stream<Path> s = Files.walk(lake)) {
            files = s.filter(Files::isRegularFile)
                    .filter(p -> p.getFileName().toString().endsWith(".parquet"))
                    .filter(p -> !p.getFileName().toString().startsWith("."))
                    .sorted()
                    .toList();
        }
        for (Path file : files) {
            String partitionPath = lake.relativize(file.getParent()).toString();
            try (ParquetReader<GenericRecord> reader = reader(file)) {
                for (GenericRecord r = reader.read(); r != null; r = reader.read())
                    rows.add(new LakeRow(partitionPath, r));
            }
        }
        return rows;
    }
}
