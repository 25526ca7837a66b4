package dev.recount.stream.sink.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;

/** The committable, its serializer, the writer that makes it and the marker that decides whether it is out. */
class TopicBatchTest {
    private static TopicRecord record(String key, String value) {
        return new TopicRecord(
                key == null ? null : key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aBatchSurvivesItsSerializerWithNullKeysAndEmptyValues() throws Exception {
        TopicBatch batch = new TopicBatch("lineage-1", 7, List.of(record("k", "v"), record(null, ""), record("", "x")));
        TopicBatch.Serializer serializer = new TopicBatch.Serializer();

        TopicBatch back = serializer.deserialize(serializer.getVersion(), serializer.serialize(batch));

        assertThat(back).isEqualTo(batch);
        assertThat(back.records().get(1).key()).isNull();
        assertThatThrownBy(() -> serializer.deserialize(99, serializer.serialize(batch)))
                .hasMessageContaining("99");
    }

    @Test
    void theWriterMakesOneBatchPerCheckpointWithRecordsAndContinuesItsSequenceAfterARestore() {
        TopicBatchWriter<String> writer =
                new TopicBatchWriter<>("L", 0, s -> record(null, s), new UnregisteredMetricsGroup());
        assertThat(writer.prepareCommit()).as("no records, no batch").isEmpty();
        writer.write("a", null);
        writer.write("b", null);
        assertThat(writer.prepareCommit())
                .containsExactly(new TopicBatch("L", 1, List.of(record(null, "a"), record(null, "b"))));
        assertThat(writer.snapshotState(10)).containsExactly(1L);
        assertThat(writer.prepareCommit()).isEmpty();

        TopicBatchWriter<String> restored =
                new TopicBatchWriter<>("L", 1, s -> record(null, s), new UnregisteredMetricsGroup());
        restored.write("c", null);
        assertThat(restored.prepareCommit()).extracting(TopicBatch::sequence).containsExactly(2L);
    }

    @Test
    void theMarkerCoversBatchesUpToItsOwnInItsOwnLineageOnly() {
        PublicationMarker marker = PublicationMarker.of(new OffsetAndMetadata(5, "L1"));
        assertThat(marker.covers(new TopicBatch("L1", 5, List.of()))).isTrue();
        assertThat(marker.covers(new TopicBatch("L1", 4, List.of()))).isTrue();
        assertThat(marker.covers(new TopicBatch("L1", 6, List.of()))).isFalse();
        assertThat(marker.covers(new TopicBatch("L2", 1, List.of())))
                .as("a new lineage starts again at 1")
                .isFalse();
        assertThat(PublicationMarker.of(null).covers(new TopicBatch("L1", 1, List.of())))
                .isFalse();
    }
}
