package dev.recount.stream.testutils;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.generic.GenericRecord;
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
            try (ParquetReader<GenericRecord> reader = AvroParquetReader.<GenericRecord>builder(
                            HadoopInputFile.fromPath(
                                    new org.apache.hadoop.fs.Path(file.toUri()),
                                    new org.apache.hadoop.conf.Configuration()))
                    .build()) {
                for (GenericRecord r = reader.read(); r != null; r = reader.read())
                    rows.add(new LakeRow(partitionPath, r));
            }
        }
        return rows;
    }
}
