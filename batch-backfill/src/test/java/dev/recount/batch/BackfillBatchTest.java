package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.db.tables.BackfillWaitingTable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** What a run checks and which offsets it commits: everything read, whatever waits, with the waiting records. */
class BackfillBatchTest {
    private static final TopicPartition P0 = new TopicPartition("late", 0);
    private static final TopicPartition P1 = new TopicPartition("late", 1);
    private static final TopicPartition P2 = new TopicPartition("late", 2);
    private static final TopicPartition P3 = new TopicPartition("late", 3);
    private static final TopicPartition P4 = new TopicPartition("late", 4);
    private static final long T = Instant.parse("2026-11-28T10:00:30Z").toEpochMilli();

    @Test
    void commitsHowFarEachPartitionWasReadAndLeavesOutThoseThatDidNotMove() {
        List<BackfillBatch.Entry> entries = new ArrayList<>();
        for (long o = 10; o < 15; o++) entries.add(entry(P0, o));
        for (long o = 3; o < 6; o++) entries.add(entry(P1, o));
        entries.add(entry(P3, 0));
        BackfillBatch batch = new BackfillBatch(
                Map.of(P0, 10L, P1, 3L, P2, 5L, P3, 0L, P4, 0L),
                // P4 read up to 8 with no record: offsets 0..7 were transaction markers or aborted records.
                Map.of(P0, 15L, P1, 6L, P2, 5L, P3, 1L, P4, 8L),
                entries,
                false);

        assertThat(batch.offsetsToCommit())
                .containsExactly(Map.entry(P0, 15L), Map.entry(P1, 6L), Map.entry(P3, 1L), Map.entry(P4, 8L));
    }

    @Test
    void waitingRecordsJoinTheReadOnesOnceEachInPartitionAndOffsetOrder() {
        LakeEvent late = LakeEvent.of("late", "click", T, "c1", "ch1", 1, 2);
        LakeEvent again = LakeEvent.of("again", "click", T + 1, "c1", "ch1", 1, 3);
        BackfillBatch read = new BackfillBatch(
                Map.of(P0, 10L, P1, 3L),
                Map.of(P0, 12L, P1, 4L),
                List.of(
                        entry(P0, 10),
                        new BackfillBatch.Entry(
                                P0, 11, BackfillRecord.fromJson(BackfillTopic.recordFor(again)), null, false),
                        entry(P1, 3)),
                false);

        BackfillBatch batch = read.withWaiting(
                "late",
                List.of(
                        waiting(1, 2, BackfillTopic.recordFor(late)),
                        // Read again from the topic too: its run committed results, then failed to commit offsets.
                        waiting(0, 11, BackfillTopic.recordFor(again)),
                        waiting(0, 4, "{not json")));

        assertThat(batch.entries())
                .extracting(e -> e.partition() + "@" + e.offset() + (e.waiting() ? " waiting" : ""))
                .containsExactly("late-0@4 waiting", "late-0@10", "late-0@11 waiting", "late-1@2 waiting", "late-1@3");
        assertThat(batch.entries().get(2).record().event().eventId).isEqualTo("again");
        assertThat(batch.entries().get(3).record().event().eventId).isEqualTo("late");
        assertThat(batch.entries().get(0).malformed()).isNotNull();
        assertThat(batch.offsetsToCommit()).isEqualTo(read.offsetsToCommit());
    }

    @Test
    void anotherRecordAtAWaitingOnesPositionIsRefused() {
        LakeEvent late = LakeEvent.of("late", "click", T, "c1", "ch1", 1, 2);
        LakeEvent other = LakeEvent.of("other", "click", T, "c1", "ch1", 1, 2);
        BackfillBatch read = new BackfillBatch(
                Map.of(P0, 0L),
                Map.of(P0, 1L),
                List.of(new BackfillBatch.Entry(
                        P0, 0, BackfillRecord.fromJson(BackfillTopic.recordFor(other)), null, false)),
                false);

        assertThatThrownBy(() -> read.withWaiting("late", List.of(waiting(0, 0, BackfillTopic.recordFor(late)))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds another record at late-0@0");
    }

    /**
     * A release before this one accepted a record it would now call malformed (bytes that are not UTF-8, a key given
     * twice), kept it waiting and did not commit its offsets: read again, the waiting copy stands for it.
     */
    @Test
    void aWaitingRecordReadAgainAsMalformedIsTheWaitingOne() {
        LakeEvent late = LakeEvent.of("late", "click", T, "c1", "ch1", 1, 2);
        BackfillBatch read = new BackfillBatch(Map.of(P0, 0L), Map.of(P0, 1L), List.of(entry(P0, 0)), false);

        BackfillBatch batch = read.withWaiting("late", List.of(waiting(0, 0, BackfillTopic.recordFor(late))));

        assertThat(batch.entries()).singleElement().satisfies(e -> {
            assertThat(e.waiting()).isTrue();
            assertThat(e.record().event().eventId).isEqualTo("late");
        });
    }

    private static BackfillWaitingTable.Waiting waiting(int partition, long offset, String json) {
        return new BackfillWaitingTable.Waiting(
                new BackfillWaitingTable.Position(partition, offset), json, "not in the lake yet");
    }

    private static BackfillBatch.Entry entry(TopicPartition tp, long offset) {
        return new BackfillBatch.Entry(tp, offset, null, "test", false);
    }
}
