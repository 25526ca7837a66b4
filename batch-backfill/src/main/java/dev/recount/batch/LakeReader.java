package dev.recount.batch;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import dev.recount.core.lake.LakeColumns;
import dev.recount.core.lake.LakeLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Reads the raw event lake ({@link LakeLayout}) for event-time ranges, touching only the partitions they need.
 *
 * <p>Pruning happens twice: only the {@code event_date=} directories of the range are listed (a lake of a year
 * is never listed in full), and a predicate on the {@code event_date}/{@code event_hour} partition columns lets
 * Spark skip the hours outside the range before opening a file. The {@code event_ts} predicate then trims the
 * first and last hour exactly and is pushed down to Parquet row groups. Files whose names start with '.' or
 * '_' (the stream job's in-progress files) are invisible, as Spark ignores them.
 */
public final class LakeReader {
    /**
     * The columns of the lake's Parquet files, derived from core's {@link LakeColumns} (the one definition the stream
     * job writes by), in file order. All nullable, whatever core says: Spark reads every Parquet column as nullable
     * anyway, and a column added later (request_id) is absent from older files, which Spark then reads as null.
     */
    public static final StructType FILE_SCHEMA = fileSchema(LakeColumns.ALL);

    /**
     * File columns plus the two directory columns. Declared rather than inferred: inference would read every
     * footer first, and would type {@code event_hour=07} as the integer 7; kept as the directory's text, the
     * zero-padded values compare correctly as strings.
     */
    static final StructType READ_SCHEMA = FILE_SCHEMA
            .add(LakeLayout.DATE_PARTITION, DataTypes.StringType)
            .add(LakeLayout.HOUR_PARTITION, DataTypes.StringType);

    private final SparkSession spark;
    private final String lakePath;

    public LakeReader(SparkSession spark, String lakePath) {
        this.spark = spark;
        this.lakePath = lakePath;
    }

    /** The Spark schema of {@code columns}, in their order. */
    static StructType fileSchema(List<LakeColumns.Column> columns) {
        StructType schema = new StructType();
        for (LakeColumns.Column c : columns) schema = schema.add(c.name(), sparkType(c.type()), true);
        return schema;
    }

    static DataType sparkType(LakeColumns.Type type) {
        return switch (type) {
            case STRING -> DataTypes.StringType;
            case INT32 -> DataTypes.IntegerType;
            case INT64 -> DataTypes.LongType;
        };
    }

    /**
     * Every lake row (duplicates included) with {@code event_ts} in one of {@code ranges}; file columns only.
     *
     * <p>The caller holds the batch layer's advisory locks for the ranges' days ({@link RunLocks}), so no
     * compaction swaps an hour meanwhile. First, a compaction of those days that died half-way through its swap
     * is finished (its compacted files are already visible; the small files they replace would otherwise be read
     * too), and a range before the retention horizon is refused ({@link LakeRetention#requireRetained}).
     */
    public Dataset<Row> read(List<TimeRange> ranges) {
        if (ranges.isEmpty()) throw new IllegalArgumentException("ranges must not be empty");
        prepare(ranges);
        List<String> dateDirs = existingDateDirectories(ranges);
        if (dateDirs.isEmpty()) {
            return spark.createDataFrame(List.of(), FILE_SCHEMA);
        }
        Column partitions = lit(false);
        Column eventTime = lit(false);
        for (TimeRange r : ranges) {
            partitions = partitions.or(hoursOf(r));
            eventTime = eventTime.or(col(LakeLayout.EVENT_TS)
                    .geq(r.fromMillis())
                    .and(col(LakeLayout.EVENT_TS).lt(r.toMillis())));
        }
        return spark.read()
                .schema(READ_SCHEMA)
                .option("basePath", base().toString())
                .parquet(dateDirs.toArray(String[]::new))
                // Two separate filters: a partition-only conjunct is what Spark's partition pruning recognises.
                .filter(partitions)
                .filter(eventTime)
                .drop(LakeLayout.DATE_PARTITION, LakeLayout.HOUR_PARTITION);
    }

    /**
     * How many rows (copies included) each lake hour that the ranges touch holds, whole hours, keyed by the hour's
     * start in epoch milliseconds; hours without files are absent. Reads the partition columns only, so Spark opens
     * each file's footer and decodes no values. What {@link LakeShortfall} compares with {@code lake_archived_rows}.
     */
    public SortedMap<Long, Long> rowsByHour(List<TimeRange> ranges) {
        SortedMap<Long, Long> rows = new TreeMap<>();
        List<String> dateDirs = existingDateDirectories(ranges);
        if (dateDirs.isEmpty()) return rows;
        Column partitions = lit(false);
        for (TimeRange r : ranges) partitions = partitions.or(hoursOf(r));
        List<Row> counts = spark.read()
                .schema(READ_SCHEMA)
                .option("basePath", base().toString())
                .parquet(dateDirs.toArray(String[]::new))
                .filter(partitions)
                .groupBy(col(LakeLayout.DATE_PARTITION), col(LakeLayout.HOUR_PARTITION))
                .count()
                .collectAsList();
        for (Row c : counts) {
            LakeHour hour = new LakeHour(LocalDate.parse(c.getString(0)), Integer.parseInt(c.getString(1)));
            rows.put(hour.startMillis(), c.getLong(2));
        }
        return rows;
    }

    private void prepare(List<TimeRange> ranges) {
        LakeStorage lake = LakeStorage.open(lakePath, spark.sparkContext().hadoopConfiguration());
        try {
            LakeRetention.requireRetained(lake, ranges);
            TreeSet<LocalDate> dates = new TreeSet<>();
            for (TimeRange r : ranges) dates.addAll(LakeLayout.datesCovering(r.fromMillis(), r.toMillis()));
            for (LocalDate d : dates) CompactionJournal.finishInterrupted(lake, d);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the lake at " + lakePath + ": " + e.getMessage(), e);
        }
    }

    /** The {@code event_date=} directories that can hold events of the ranges and exist (a day may have none). */
    List<String> existingDateDirectories(List<TimeRange> ranges) {
        TreeSet<LocalDate> dates = new TreeSet<>();
        for (TimeRange r : ranges) dates.addAll(LakeLayout.datesCovering(r.fromMillis(), r.toMillis()));
        Path base = base();
        try {
            FileSystem fs = base.getFileSystem(spark.sparkContext().hadoopConfiguration());
            // A day without a directory simply had no events, but a missing lake is a wrong lake.path: replacing a
            // range with "no events" from it would wipe good results.
            if (!fs.exists(base)) {
                throw new IllegalStateException(
                        "the lake " + lakePath + " does not exist (setting lake.path or --lake)");
            }
            List<String> dirs = new ArrayList<>();
            for (LocalDate d : dates) {
                Path dir = new Path(base, LakeLayout.DATE_PARTITION + "=" + d);
                if (fs.exists(dir)) dirs.add(dir.toString());
            }
            return dirs;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the lake at " + lakePath + ": " + e.getMessage(), e);
        }
    }

    /** The lake root as a fully qualified URI (a relative local path becomes absolute). */
    private Path base() {
        Path p = new Path(lakePath);
        try {
            return p.getFileSystem(spark.sparkContext().hadoopConfiguration()).makeQualified(p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the lake at " + lakePath + ": " + e.getMessage(), e);
        }
    }

    /** The (date, hour) directories of {@code r} as a predicate on the partition columns only. */
    private static Column hoursOf(TimeRange r) {
        ZonedDateTime first = Instant.ofEpochMilli(r.fromMillis()).atZone(ZoneOffset.UTC);
        ZonedDateTime last = Instant.ofEpochMilli(r.toMillis() - 1).atZone(ZoneOffset.UTC);
        Column date = col(LakeLayout.DATE_PARTITION);
        Column hour = col(LakeLayout.HOUR_PARTITION);
        String d0 = first.toLocalDate().toString();
        String d1 = last.toLocalDate().toString();
        Column fromHour = date.gt(d0).or(date.equalTo(d0).and(hour.geq(twoDigits(first.getHour()))));
        Column toHour = date.lt(d1).or(date.equalTo(d1).and(hour.leq(twoDigits(last.getHour()))));
        return fromHour.and(toHour);
    }

    private static String twoDigits(int hour) {
        return String.format("%02d", hour);
    }
}
