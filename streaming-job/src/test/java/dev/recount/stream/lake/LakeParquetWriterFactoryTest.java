package dev.recount.stream.lake;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.event;
import static dev.recount.stream.Fixtures.impression;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.stream.testutils.LakeFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lake's Parquet files have exactly the columns the batch layer reads, and round-trip the events. */
class LakeParquetWriterFactoryTest {

    @Test
    void writesTheLakeColumnsExactly(@TempDir Path dir) throws Exception {
        AdEvent a = click("c1", W0.plusSeconds(1), 17);
        AdEvent b = impression("i1", W0.plusSeconds(2), 18);
        b.requestId = "i1";
        b.withAttributes(new String[] {"top"}, new long[] {3}, "{\"slot_id\":\"top\",\"quantity\":3}");
        List<GenericRecord> records = LakeFiles.writeAndRead(List.of(a, b), dir.resolve("part-0.parquet"));

        Schema schema = records.get(0).getSchema();
        assertThat(schema.getFields())
                .extracting(f -> f.name() + ":" + f.schema().getType().getName())
                .containsExactly(
                        "event_id:string",
                        "event_type:string",
                        "event_ts:long",
                        "campaign_id:string",
                        "channel_id:string",
                        "cost_micros:long",
                        "kafka_topic:string",
                        "kafka_partition:int",
                        "kafka_offset:long",
                        "record_ts:long",
                        "request_id:union",
                        "attributes:union");
        assertThat(schema.getField("request_id").schema().getTypes())
                .extracting(t -> t.getType().getName())
                .containsExactly("null", "string");
        assertThat(schema.getField("attributes").schema().getTypes())
                .extracting(t -> t.getType().getName())
                .containsExactly("null", "string");
        GenericRecord first = records.get(0);
        assertThat(first.get("event_id").toString()).isEqualTo("c1");
        assertThat(first.get("event_type").toString()).isEqualTo("click");
        assertThat(first.get("event_ts")).isEqualTo(a.eventTs);
        assertThat(first.get("cost_micros")).isEqualTo(250_000L);
        assertThat(first.get("kafka_partition")).isEqualTo(0);
        assertThat(first.get("kafka_offset")).isEqualTo(17L);
        assertThat(first.get("record_ts")).isEqualTo(a.recordTs);
        assertThat(first.get("request_id")).isNull();
        assertThat(records.get(1).get("event_type").toString()).isEqualTo("impression");
        assertThat(records.get(1).get("request_id").toString()).isEqualTo("i1");
        assertThat(first.get("attributes"))
                .as("an event with no field beyond the contract")
                .isNull();
        assertThat(records.get(1).get("attributes").toString()).isEqualTo("{\"slot_id\":\"top\",\"quantity\":3}");
    }

    /**
     * Min/max statistics where a reader can prune by them (event time, the numbers), none where it cannot (ids, and
     * the short strings every row group holds all of), which only cost the writer time.
     */
    @Test
    void minAndMaxAreKeptOnlyWhereTheyCanPrune(@TempDir Path dir) throws Exception {
        List<AdEvent> events = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            AdEvent e = click("e" + i, W0.plusMillis(i), i);
            e.campaignId = "camp-" + (i % 7);
            e.requestId = i % 2 == 0 ? "r" + i : null;
            events.add(e);
        }
        Path file = dir.resolve("part-0.parquet");
        LakeFiles.writeAndRead(events, file);
        Map<String, Boolean> minMax = new TreeMap<>();
        try (ParquetFileReader r = ParquetFileReader.open(
                HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file.toUri()), new Configuration(false)))) {
            for (BlockMetaData block : r.getFooter().getBlocks()) {
                for (ColumnChunkMetaData c : block.getColumns()) {
                    minMax.merge(c.getPath().toDotString(), c.getStatistics().hasNonNullValue(), Boolean::logicalOr);
                }
            }
        }
        assertThat(minMax)
                .containsOnlyKeys(LakeSchema.SCHEMA.getFields().stream()
                        .map(f -> f.getName())
                        .toList())
                .containsEntry("event_ts", true)
                .containsEntry("cost_micros", true)
                .containsEntry("kafka_partition", true)
                .containsEntry("kafka_offset", true)
                .containsEntry("record_ts", true)
                .containsEntry("event_id", false)
                .containsEntry("request_id", false)
                .containsEntry("campaign_id", false)
                .containsEntry("channel_id", false)
                .containsEntry("event_type", false)
                .containsEntry("kafka_topic", false);
    }

    @Test
    void everyEventTypeAndEachTopicIsWrittenAsItsOwnName(@TempDir Path dir) throws Exception {
        // The writer encodes type names once and the previous topic once: a topic change must not reuse the old.
        List<AdEvent> events = new ArrayList<>();
        String[] topics = {"ads", "ads", "ads-eu", "ads", "ünïcode-topic"};
        for (int i = 0; i < topics.length; i++) {
            for (EventType type : EventType.values()) {
                AdEvent e = event(type + "-" + i, type, W0.plusSeconds(i), "camp-a", "search", 1_000, i);
                e.topic = topics[i];
                events.add(e);
            }
        }
        List<GenericRecord> records = LakeFiles.writeAndRead(events, dir.resolve("part-0.parquet"));

        assertThat(records)
                .extracting(r -> r.get("event_type") + "@" + r.get("kafka_topic"))
                .containsExactlyElementsOf(events.stream()
                        .map(e -> e.eventType.wireName() + "@" + e.topic)
                        .toList());
    }

    @Test
    void bucketsAreHiveStyleUtcHours() {
        LakeBucketAssigner assigner = new LakeBucketAssigner();
        assertThat(assigner.getBucketId(click("a", W0.plusSeconds(3599), 0), null))
                .isEqualTo("event_date=2026-11-29/event_hour=10");
        assertThat(assigner.getBucketId(click("b", W0.plusSeconds(3600), 0), null))
                .isEqualTo("event_date=2026-11-29/event_hour=11");
        assertThat(assigner.getBucketId(click("c", W0.minusSeconds(36001), 0), null))
                .isEqualTo("event_date=2026-11-28/event_hour=23");
    }

    @Test
    void aFileGetsItsParquetWriterOnlyOnceItHoldsEnoughEvents(@TempDir Path dir) throws Exception {
        // Nothing reaches the file before its writer exists; Parquet's writer starts the file with its magic bytes.
        List<AdEvent> events = new ArrayList<>();
        for (int i = 0; i < LakeParquetWriterFactory.WRITER_AFTER_EVENTS + 10; i++) {
            events.add(click("e" + i, W0.plusMillis(i), i));
        }
        Path file = dir.resolve("part-0.parquet");
        try (FSDataOutputStream out = LakeFiles.newFile(file)) {
            BulkWriter<AdEvent> writer = new LakeParquetWriterFactory().create(out);
            for (int i = 0; i < LakeParquetWriterFactory.WRITER_AFTER_EVENTS - 1; i++) {
                writer.addElement(events.get(i));
            }
            assertThat(out.getPos())
                    .as("no Parquet writer for a file of few events")
                    .isZero();
            for (int i = LakeParquetWriterFactory.WRITER_AFTER_EVENTS - 1; i < events.size(); i++) {
                writer.addElement(events.get(i));
            }
            assertThat(out.getPos())
                    .as("a Parquet writer once the file holds enough")
                    .isPositive();
            writer.finish();
        }
        assertThat(LakeFiles.read(dir))
                .extracting(r -> r.get("event_id"))
                .containsExactlyElementsOf(events.stream().map(e -> e.eventId).toList());
    }

    @Test
    void eventsHeldBeforeTheWriterAreCopiesNotTheCallersInstance(@TempDir Path dir) throws Exception {
        // With object reuse the job hands the lake one instance, refilled for every event.
        AdEvent reused = click("first", W0.plusSeconds(1), 1);
        Path file = dir.resolve("part-0.parquet");
        try (FSDataOutputStream out = LakeFiles.newFile(file)) {
            BulkWriter<AdEvent> writer = new LakeParquetWriterFactory().create(out);
            writer.addElement(reused);
            reused.eventId = "second";
            reused.eventTs += 1_000;
            reused.offset = 2;
            writer.addElement(reused);
            writer.finish();
        }
        assertThat(LakeFiles.read(dir))
                .extracting(r -> r.get("event_id") + "@" + r.get("kafka_offset"))
                .containsExactly("first@1", "second@2");
    }
}
