package dev.recount.batch.testutils;

import dev.recount.batch.LakeReader;
import dev.recount.core.lake.LakeLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Writes a raw event lake exactly as the stream job lays it out: one Parquet file per write and hour,
 * {@code <root>/event_date=YYYY-MM-DD/event_hour=HH/part-<n>.parquet}, with the lake's columns. Files can also be
 * left "in progress" (a hidden name starting with '.', as a file sink leaves them before a checkpoint) and
 * committed later.
 */
public final class LakeFixture {
    private final SparkSession spark;
    private final Path root;
    private final AtomicInteger files = new AtomicInteger();

    public LakeFixture(SparkSession spark, Path root) {
        this.spark = spark;
        this.root = root;
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path root() {
        return root;
    }

    /** The lake's columns before request_id was added: what files written by the first versions hold. */
    public static final StructType SCHEMA_WITHOUT_REQUEST_ID =
            new StructType(java.util.Arrays.stream(LakeReader.FILE_SCHEMA.fields())
                    .takeWhile(f -> !f.name().equals(LakeLayout.REQUEST_ID))
                    .toArray(StructField[]::new));

    /** The lake's columns before attributes was added: what files written before metric sets hold. */
    public static final StructType SCHEMA_WITHOUT_ATTRIBUTES =
            new StructType(java.util.Arrays.stream(LakeReader.FILE_SCHEMA.fields())
                    .takeWhile(f -> !f.name().equals(LakeLayout.ATTRIBUTES))
                    .toArray(StructField[]::new));

    /** Writes committed files (one per hour partition the events fall in); returns them. */
    public List<Path> write(List<LakeEvent> events) {
        return write(events, false, LakeReader.FILE_SCHEMA, LakeEvent::toRow);
    }

    /** Writes committed files as a version of the stream job before request_id existed wrote them. */
    public List<Path> writeWithoutRequestId(List<LakeEvent> events) {
        return write(events, false, SCHEMA_WITHOUT_REQUEST_ID, LakeEvent::toRowWithoutRequestId);
    }

    /** Writes committed files as a version of the stream job before the attributes column existed wrote them. */
    public List<Path> writeWithoutAttributes(List<LakeEvent> events) {
        return write(events, false, SCHEMA_WITHOUT_ATTRIBUTES, LakeEvent::toRowWithoutAttributes);
    }

    /** Writes the events as hidden in-progress files, invisible to readers until {@link #commit}. */
    public List<Path> writeInProgress(List<LakeEvent> events) {
        return write(events, true, LakeReader.FILE_SCHEMA, LakeEvent::toRow);
    }

    /**
     * Writes committed files exactly as the stream job's sink does ({@link StreamLakeFiles}: parquet-mr, REQUIRED
     * columns), one per hour, named like Flink's file sink names its part files; returns them.
     */
    public List<Path> writeLikeStream(List<LakeEvent> events) {
        return writeLikeStream(events, null);
    }

    /** As {@link #writeLikeStream(List)}, with an optional {@code request_id} column (null: the plain schema). */
    public List<Path> writeLikeStream(
            List<LakeEvent> events, java.util.function.Function<LakeEvent, String> requestId) {
        Map<String, List<LakeEvent>> byPartition = new TreeMap<>();
        for (LakeEvent e : events) {
            byPartition
                    .computeIfAbsent(LakeLayout.partitionPath(e.eventTs()), k -> new ArrayList<>())
                    .add(e);
        }
        List<Path> written = new ArrayList<>();
        byPartition.forEach((partition, rows) -> {
            Path file = root.resolve(partition)
                    .resolve("part-"
                            + java.util.UUID.nameUUIDFromBytes((partition + files.incrementAndGet())
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8))
                            + "-0-"
                            + files.get() + ".parquet");
            StreamLakeFiles.write(file, rows, requestId);
            written.add(file);
        });
        return written;
    }

    /** Renames in-progress files to their committed names, as the sink does on a checkpoint. */
    public void commit(List<Path> inProgress) {
        for (Path p : inProgress) {
            String name = p.getFileName().toString();
            if (!name.startsWith(".")) throw new IllegalArgumentException(p + " is not in progress");
            move(p, p.resolveSibling(name.substring(1).replace(".inprogress", "")));
        }
    }

    public void delete(List<Path> written) {
        try {
            for (Path p : written) Files.delete(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Drops a file that is not Parquet into the partition of {@code eventTs}: reading it would fail. */
    public Path writeGarbage(long eventTs) {
        try {
            Path dir = Files.createDirectories(root.resolve(LakeLayout.partitionPath(eventTs)));
            return Files.writeString(
                    dir.resolve("part-garbage-" + files.incrementAndGet() + ".parquet"), "not parquet");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<Path> write(
            List<LakeEvent> events,
            boolean inProgress,
            StructType schema,
            java.util.function.Function<LakeEvent, Row> toRow) {
        Map<String, List<Row>> byPartition = new TreeMap<>();
        for (LakeEvent e : events) {
            byPartition
                    .computeIfAbsent(LakeLayout.partitionPath(e.eventTs()), k -> new ArrayList<>())
                    .add(toRow.apply(e));
        }
        List<Path> written = new ArrayList<>();
        byPartition.forEach((partition, rows) -> {
            try {
                Path tmp = Files.createTempDirectory("lake-file-");
                Path out = tmp.resolve("out");
                spark.createDataFrame(rows, schema)
                        .coalesce(1)
                        .write()
                        .mode(SaveMode.ErrorIfExists)
                        .parquet(out.toString());
                Path part;
                try (Stream<Path> s = Files.list(out)) {
                    part = s.filter(p -> p.getFileName().toString().startsWith("part-")
                                    && p.getFileName().toString().endsWith(".parquet"))
                            .findFirst()
                            .orElseThrow();
                }
                Path dir = Files.createDirectories(root.resolve(partition));
                int n = files.incrementAndGet();
                String name = inProgress ? ".part-" + n + ".parquet.inprogress" : "part-" + n + ".parquet";
                written.add(move(part, dir.resolve(name)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return written;
    }

    private static Path move(Path from, Path to) {
        try {
            return Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
