package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.LakeFixture;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.core.lake.LakeColumns;
import dev.recount.core.lake.LakeLayout;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading Parquet in the lake's exact layout: range trimming, partition pruning, in-progress files. */
class LakeReaderTest {
    private static final long FROM = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long TO = Instant.parse("2026-11-28T12:00:00Z").toEpochMilli();

    @TempDir
    Path lakeDir;

    @Test
    void readsExactlyTheEventsInTheRangeFromTheFirstToTheLastMillisecond() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        lake.write(List.of(
                LakeEvent.of("before", "click", FROM - 1, "c", "ch", 1, 1),
                LakeEvent.of("first", "click", FROM, "c", "ch", 1, 2),
                LakeEvent.of("middle", "click", FROM + 3_600_000, "c", "ch", 1, 3),
                LakeEvent.of("last", "click", TO - 1, "c", "ch", 1, 4),
                LakeEvent.of("after", "click", TO, "c", "ch", 1, 5)));

        assertThat(eventIds(new TimeRange(FROM, TO))).containsExactlyInAnyOrder("first", "middle", "last");
    }

    @Test
    void neverOpensFilesOfHoursOrDaysOutsideTheRange() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        lake.write(List.of(LakeEvent.of("inside", "click", FROM + 5, "c", "ch", 1, 1)));
        // Unreadable files in the hour before, the hour after and the previous day: opening any would fail.
        lake.writeGarbage(FROM - 1);
        lake.writeGarbage(TO);
        lake.writeGarbage(FROM - 86_400_000);

        assertThat(eventIds(new TimeRange(FROM, TO))).containsExactly("inside");
    }

    @Test
    void ignoresInProgressFilesUntilTheyAreCommitted() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        lake.write(List.of(LakeEvent.of("committed", "click", FROM, "c", "ch", 1, 1)));
        List<Path> pending = lake.writeInProgress(List.of(LakeEvent.of("pending", "click", FROM + 1, "c", "ch", 1, 2)));
        assertThat(pending.get(0).getFileName().toString()).startsWith(".");

        assertThat(eventIds(new TimeRange(FROM, TO))).containsExactly("committed");
        lake.commit(pending);
        assertThat(eventIds(new TimeRange(FROM, TO))).containsExactlyInAnyOrder("committed", "pending");
    }

    @Test
    void readsSeveralRangesAndAnEmptyLake() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        assertThat(eventIds(new TimeRange(FROM, TO))).isEmpty();
        lake.write(List.of(
                LakeEvent.of("a", "click", FROM, "c", "ch", 1, 1),
                LakeEvent.of("b", "click", FROM + 60_000, "c", "ch", 1, 2),
                LakeEvent.of("c", "click", FROM + 86_400_000, "c", "ch", 1, 3)));

        LakeReader reader = new LakeReader(SharedSpark.session(), lakeDir.toString());
        List<Row> rows = reader.read(List.of(
                        new TimeRange(FROM, FROM + 60_000), new TimeRange(FROM + 86_400_000, FROM + 86_460_000)))
                .collectAsList();
        assertThat(rows)
                .extracting(r -> r.getString(r.fieldIndex(LakeLayout.EVENT_ID)))
                .containsExactlyInAnyOrder("a", "c");
        assertThat(rows.get(0).schema().fieldNames()).containsExactly(LakeReader.FILE_SCHEMA.fieldNames());
    }

    /** request_id is optional: null when an event had none, and null from files written before the column existed. */
    @Test
    void readsRequestIdsAndFilesWrittenBeforeTheColumnExisted() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        lake.writeWithoutRequestId(List.of(LakeEvent.of("old", "click", FROM, "c", "ch", 1, 1)));
        lake.write(List.of(
                LakeEvent.of("imp", "impression", FROM + 1, "c", "ch", 1, 2).withRequestId("imp"),
                LakeEvent.of("clk", "click", FROM + 2, "c", "ch", 1, 3).withRequestId("imp"),
                LakeEvent.of("none", "click", FROM + 3, "c", "ch", 1, 4)));

        List<Row> rows = new LakeReader(SharedSpark.session(), lakeDir.toString())
                .read(List.of(new TimeRange(FROM, TO)))
                .collectAsList();

        assertThat(rows)
                .extracting(r -> r.getString(r.fieldIndex(LakeLayout.EVENT_ID)) + "="
                        + r.getString(r.fieldIndex(LakeLayout.REQUEST_ID)))
                .containsExactlyInAnyOrder("old=null", "imp=imp", "clk=imp", "none=null");
        assertThat(rows.get(0).schema().fieldNames()).containsExactly(LakeReader.FILE_SCHEMA.fieldNames());
    }

    /** The read schema follows core's one column list: a column added there without the reader following fails. */
    @Test
    void theFileSchemaIsCoresColumnsInOrderWithTheirTypes() {
        StructField[] fields = LakeReader.FILE_SCHEMA.fields();
        assertThat(fields).hasSameSizeAs(LakeColumns.ALL);
        for (int i = 0; i < fields.length; i++) {
            LakeColumns.Column column = LakeColumns.ALL.get(i);
            assertThat(fields[i].name()).isEqualTo(column.name());
            DataType expected = switch (column.type()) {
                case STRING -> DataTypes.StringType;
                case INT32 -> DataTypes.IntegerType;
                case INT64 -> DataTypes.LongType;
            };
            assertThat(fields[i].dataType()).as(column.name()).isEqualTo(expected);
            assertThat(fields[i].nullable())
                    .as(column.name() + ": Spark reads every Parquet column as nullable")
                    .isTrue();
        }
    }

    /** A file as the stream job writes it (REQUIRED columns, parquet-mr) is read with a value in every core column. */
    @Test
    void readsEveryCoreColumnOfAFileWrittenLikeTheStream() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        LakeEvent event = new LakeEvent("e1", "click", FROM + 7, "c1", "ch1", 250_000, "ad-events", 2, 41, FROM + 9)
                .withAttributes("{\"slot_id\":\"s1\"}");
        lake.writeLikeStream(List.of(event), e -> "req-1");

        List<Row> rows = new LakeReader(SharedSpark.session(), lakeDir.toString())
                .read(List.of(new TimeRange(FROM, TO)))
                .collectAsList();

        assertThat(rows).hasSize(1);
        Row row = rows.get(0);
        for (LakeColumns.Column column : LakeColumns.ALL) {
            assertThat(row.get(row.fieldIndex(column.name()))).as(column.name()).isNotNull();
        }
        assertThat(row)
                .isEqualTo(org.apache.spark.sql.RowFactory.create(
                        "e1",
                        "click",
                        FROM + 7,
                        "c1",
                        "ch1",
                        250_000L,
                        "ad-events",
                        2,
                        41L,
                        FROM + 9,
                        "req-1",
                        "{\"slot_id\":\"s1\"}"));
    }

    /**
     * attributes, the JSON of every field beyond the contract, is optional: null when an event had none, and null
     * from files written before the column existed (then a set declared later sees every attribute at its default).
     */
    @Test
    void readsAttributesAndFilesWrittenBeforeTheColumnExisted() {
        LakeFixture lake = new LakeFixture(SharedSpark.session(), lakeDir);
        lake.writeWithoutRequestId(List.of(LakeEvent.of("first", "click", FROM, "c", "ch", 1, 1)));
        lake.writeWithoutAttributes(List.of(
                LakeEvent.of("older", "click", FROM + 1, "c", "ch", 1, 2).withRequestId("r")));
        lake.write(List.of(
                LakeEvent.of("extras", "click", FROM + 2, "c", "ch", 1, 3).withAttributes("{\"country\":\"DE\"}"),
                LakeEvent.of("none", "click", FROM + 3, "c", "ch", 1, 4)));

        List<Row> rows = new LakeReader(SharedSpark.session(), lakeDir.toString())
                .read(List.of(new TimeRange(FROM, TO)))
                .collectAsList();

        assertThat(rows)
                .extracting(r -> r.getString(r.fieldIndex(LakeLayout.EVENT_ID)) + "="
                        + r.getString(r.fieldIndex(LakeLayout.ATTRIBUTES)))
                .containsExactlyInAnyOrder("first=null", "older=null", "extras={\"country\":\"DE\"}", "none=null");
        assertThat(rows.get(0).schema().fieldNames()).containsExactly(LakeReader.FILE_SCHEMA.fieldNames());
    }

    @Test
    void aLakeThatDoesNotExistIsAnErrorNotAnEmptyRange() {
        LakeReader reader =
                new LakeReader(SharedSpark.session(), lakeDir.resolve("typo").toString());
        assertThatThrownBy(() -> reader.read(List.of(new TimeRange(FROM, TO))))
                .hasMessageContaining("typo does not exist (setting lake.path or --lake)");
    }

    private List<String> eventIds(TimeRange range) {
        return new LakeReader(SharedSpark.session(), lakeDir.toString())
                .read(List.of(range))
                .select(LakeLayout.EVENT_ID)
                .as(org.apache.spark.sql.Encoders.STRING())
                .collectAsList();
    }
}
