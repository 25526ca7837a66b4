package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class DeletedInputTest {
    private static final TopicPartition P0 = new TopicPartition("in", 0);
    private static final TopicPartition P1 = new TopicPartition("in", 1);
    private static final TopicPartition P2 = new TopicPartition("in", 2);

    @Test
    void aResumePositionBelowTheEarliestOffsetIsAGapUpToIt() {
        assertThat(DeletedInput.between(
                        Map.of(P0, 10L, P1, 40L, P2, 5L),
                        Map.of(P0, 25L, P1, 40L, P2, 0L),
                        Map.of(P0, 90L, P1, 90L, P2, 90L)))
                .containsExactly(new DeletedInput(P0, 10, 25));
    }

    @Test
    void aResumePositionPastTheEndMeansTheTopicWasRecreated() {
        assertThat(DeletedInput.between(Map.of(P1, 40L, P0, 3L), Map.of(P0, 0L, P1, 0L), Map.of(P0, 3L, P1, 12L)))
                .containsExactly(new DeletedInput(P1, 40, 40));
    }

    @Test
    void gapsComeInPartitionOrderAndTheRefusalNamesEachAndTheWayOn() {
        String refusal = DeletedInput.refusal(
                "in",
                DeletedInput.between(
                        Map.of(P2, 1L, P0, 2L, P1, 3L),
                        Map.of(P0, 4L, P1, 0L, P2, 9L),
                        Map.of(P0, 9L, P1, 9L, P2, 9L)));
        assertThat(refusal)
                .contains("partition 0 resumes at offset 2, but its records before offset 4 were deleted (2 offsets); "
                        + "partition 2 resumes at offset 1, but its records before offset 9 were deleted (8 offsets)")
                .contains("--skip-deleted-input")
                .doesNotContain("partition 1");
    }

    @Test
    void partitionsTheStartDoesNotResumeInAreNoGap() {
        assertThat(DeletedInput.between(Map.of(), Map.of(P0, 4L), Map.of(P0, 9L)))
                .isEmpty();
    }
}
