package dev.recount.stream.run;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;

/**
 * Input records deleted before the job read them: a start that would resume at a position the topic no longer holds
 * (retention ran while the job was down, someone deleted records, or the topic was recreated). Their events can be
 * counted nowhere: not in a row, not in the lake (which the batch layer recomputes from), not on the backfill
 * topic. So a start is refused until someone decides, with {@code --skip-deleted-input}, to go on without them.
 *
 * <p>Where a start resumes is known exactly after a --bounded run (its stopping offsets). For a restore it is in the
 * checkpoint; the job's consumer group holds the position of the last checkpoint whose offsets were committed, which
 * is that position or, if the job died before committing them, an earlier one. A gap found from the group's offsets
 * can therefore be up to one checkpoint's records too large, or (after the broker expired the group's offsets) not
 * be found here at all: then the consumer finds it, and the job fails rather than skip ({@code FailAtDeletedInput}).
 *
 * @param from the first offset the job has not read
 * @param to   the earliest offset still on the topic; the records of {@code [from, to)} are gone
 */
record DeletedInput(TopicPartition partition, long from, long to) {

    /** Records in the gap, transaction markers and aborted records included (they take offsets too). */
    long offsets() {
        return to - from;
    }

    /**
     * The gaps between where a start resumes and what the topic still holds: every partition whose resume position
     * is below its earliest offset, or beyond its latest (a recreated topic starts again at 0).
     */
    static List<DeletedInput> between(
            Map<TopicPartition, Long> resumeAt, Map<TopicPartition, Long> earliest, Map<TopicPartition, Long> latest) {
        List<DeletedInput> gaps = new ArrayList<>();
        resumeAt.forEach((tp, position) -> {
            Long first = earliest.get(tp);
            Long end = latest.get(tp);
            if (first != null && position < first) gaps.add(new DeletedInput(tp, position, first));
            else if (end != null && position > end) gaps.add(new DeletedInput(tp, position, position));
        });
        gaps.sort(Comparator.comparing(
                DeletedInput::partition,
                Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition)));
        return gaps;
    }

    private String describe() {
        if (to == from) {
            return "partition " + partition.partition() + " resumes at offset " + from
                    + ", past the topic's end (was the topic recreated?)";
        }
        return "partition " + partition.partition() + " resumes at offset " + from + ", but its records before offset "
                + to + " were deleted (" + offsets() + " offsets)";
    }

    static String describe(List<DeletedInput> gaps) {
        return gaps.stream().map(DeletedInput::describe).collect(Collectors.joining("; "));
    }

    /** The one-line refusal of a start that would skip {@code gaps}. */
    static String refusal(String topic, List<DeletedInput> gaps) {
        return "input topic " + topic + ": " + describe(gaps) + ". The job never read those records, so their events "
                + "would be counted nowhere, not even by a backfill (they are not in the lake). If they cannot be "
                + "restored to the topic, start with --skip-deleted-input to go on from the earliest offset still there "
                + "(once: a run with it skips any such gap silently)";
    }
}
