package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Which backfill offsets a run may commit: never past a record whose event is not settled. */
class BackfillBatchTest {
    private static final TopicPartition P0 = new TopicPartition("late", 0);
    private static final TopicPartition P1 = new TopicPartition("late", 1);
    private static final TopicPartition P2 = new TopicPartition("late", 2);
    private static final TopicPartition P3 = new TopicPartition("late", 3);
    private static final TopicPartition P4 = new TopicPartition("late", 4);

    @Test
    void stopsAtTheFirstPendingRecordOfEachPartition() {
        List<BackfillBatch.Entry> entries = new ArrayList<>();
        for (long o = 10; o < 15; o++) entries.add(entry(P0, o));
        for (long o = 3; o < 6; o++) entries.add(entry(P1, o));
        entries.add(entry(P3, 0));
        entries.add(entry(P3, 1));
        for (long o = 0; o < 4; o++) entries.add(entry(P4, o));
        BackfillBatch batch = new BackfillBatch(
                Map.of(P0, 10L, P1, 3L, P2, 5L, P3, 0L, P4, 0L),
                // P4 read up to 8: offsets 4..7 were transaction markers or aborted records.
                Map.of(P0, 15L, P1, 6L, P2, 5L, P3, 2L, P4, 8L),
                entries,
                false);
        Set<String> pending = Set.of("late-0@12", "late-0@14", "late-3@0");

        Map<TopicPartition, Long> commits =
                batch.offsetsToCommit(e -> !pending.contains(e.partition() + "@" + e.offset()));

        // P0 stops before 12 (13 is done but after a pending one); P2 did not move; P3's first record is pending.
        assertThat(commits).containsExactly(Map.entry(P0, 12L), Map.entry(P1, 6L), Map.entry(P4, 8L));
    }

    private static BackfillBatch.Entry entry(TopicPartition tp, long offset) {
        return new BackfillBatch.Entry(tp, offset, null, "test");
    }
}
