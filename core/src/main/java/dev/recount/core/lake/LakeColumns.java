package dev.recount.core.lake;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The columns of the raw event lake's files, in file order: the one definition. The stream job derives its Parquet
 * schema from it (streaming-job's {@code LakeSchema}) and the batch layer its Spark read schema
 * ({@code LakeReader.FILE_SCHEMA}); each has a test that fails when it no longer matches this list.
 *
 * <p>Existing files must stay readable, so a column is never renamed, retyped or moved. A new column is nullable and
 * goes last: files written before it existed are then a prefix of the schema, and every reader sees the column as
 * null in them (as {@link LakeLayout#REQUEST_ID} was added).
 *
 * <p>Plain Java on purpose: core depends on neither Parquet nor Spark.
 */
public final class LakeColumns {
    /** A column's value type, as stored in the file. */
    public enum Type {
        /** UTF-8 text (Parquet {@code binary (STRING)}). */
        STRING,
        /** A 32-bit signed integer (Parquet {@code int32}). */
        INT32,
        /** A 64-bit signed integer (Parquet {@code int64}); times are epoch milliseconds. */
        INT64
    }

    /** One column: its name, value type and whether a row may lack a value. */
    public record Column(String name, Type type, boolean nullable) {
        public Column {
            if (name == null || name.isBlank()) throw new IllegalArgumentException("name must not be blank");
            Objects.requireNonNull(type, "type");
        }
    }

    /** The name of the record type the files carry (Parquet's message name). */
    public static final String RECORD_NAME = "raw_event";

    /** Every column, in file order. The Kafka coordinates let the batch layer keep one copy of a duplicated id. */
    public static final List<Column> ALL = List.of(
            required(LakeLayout.EVENT_ID, Type.STRING),
            required(LakeLayout.EVENT_TYPE, Type.STRING),
            required(LakeLayout.EVENT_TS, Type.INT64),
            required(LakeLayout.CAMPAIGN_ID, Type.STRING),
            required(LakeLayout.CHANNEL_ID, Type.STRING),
            required(LakeLayout.COST_MICROS, Type.INT64),
            required(LakeLayout.KAFKA_TOPIC, Type.STRING),
            required(LakeLayout.KAFKA_PARTITION, Type.INT32),
            required(LakeLayout.KAFKA_OFFSET, Type.INT64),
            required(LakeLayout.RECORD_TS, Type.INT64),
            // Added later: null when the event had none, and in every file written before it existed.
            nullable(LakeLayout.REQUEST_ID, Type.STRING),
            // Added with metric sets: every field beyond the contract, as JSON text; null when there were none.
            nullable(LakeLayout.ATTRIBUTES, Type.STRING));

    static {
        Set<String> names = new HashSet<>();
        for (Column c : ALL) {
            if (!names.add(c.name())) throw new IllegalStateException("lake column " + c.name() + " is listed twice");
        }
    }

    private LakeColumns() {}

    /** The column named {@code name}. */
    public static Column named(String name) {
        return ALL.stream()
                .filter(c -> c.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no lake column named " + name));
    }

    /** Its position in file order. */
    public static int indexOf(String name) {
        return ALL.indexOf(named(name));
    }

    private static Column required(String name, Type type) {
        return new Column(name, type, false);
    }

    private static Column nullable(String name, Type type) {
        return new Column(name, type, true);
    }
}
