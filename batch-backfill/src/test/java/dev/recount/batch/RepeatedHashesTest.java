package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** The map and reduce sides of {@link RepeatedHashes}, without Spark's shuffle between them. */
class RepeatedHashesTest {
    @Test
    void aValueRepeatedAcrossArraysOrWithinOneIsFoundOnceHoweverOftenItOccurs() {
        long[] repeats = RepeatedHashes.repeats(
                List.of(new long[] {7, Long.MIN_VALUE, 0, 3}, new long[] {0, 9, Long.MAX_VALUE, 7, 7}, new long[] {
                    Long.MAX_VALUE, -1, Long.MIN_VALUE
                }));

        assertThat(repeats).containsExactly(Long.MIN_VALUE, 0, 7, Long.MAX_VALUE);
        assertThat(RepeatedHashes.repeats(List.of(new long[] {1, 2, 3}))).isEmpty();
        assertThat(RepeatedHashes.repeats(List.of())).isEmpty();
    }

    @Test
    void bucketsFollowTheTopBitsSoEveryOccurrenceOfAValueMeetsTheOthers() {
        assertThat(RepeatedHashes.bucket(0)).isZero();
        assertThat(RepeatedHashes.bucket(-1)).isEqualTo(RepeatedHashes.BUCKETS - 1);
        assertThat(RepeatedHashes.bucket(Long.MIN_VALUE)).isEqualTo(RepeatedHashes.BUCKETS / 2);
        assertThat(new RepeatedHashes.ByBucket(16).getPartition(RepeatedHashes.BUCKETS - 1))
                .isEqualTo((RepeatedHashes.BUCKETS - 1) % 16);
    }

    /**
     * Random values from several map tasks, through bucketing, the shuffle's order (by bucket) and the per-bucket
     * reduce: the repeats are exactly those a count per value finds, including values that repeat only across tasks.
     */
    @Test
    void mapAndReduceTogetherFindExactlyTheValuesCountedMoreThanOnce() {
        Random random = new Random(20261128);
        List<List<Long>> tasks = new ArrayList<>();
        Map<Long, Integer> counts = new HashMap<>();
        for (int t = 0; t < 5; t++) {
            List<Long> values = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                long v = random.nextInt(10) == 0 ? random.nextInt(3_000) * 0x9E37_79B9_7F4A_7C15L : random.nextLong();
                values.add(v);
                counts.merge(v, 1, Integer::sum);
            }
            tasks.add(values);
        }
        List<Tuple2<Integer, long[]>> shuffled = new ArrayList<>();
        for (List<Long> values : tasks) RepeatedHashes.bucketed(rows(values)).forEachRemaining(shuffled::add);
        shuffled.sort((a, b) -> Integer.compare(a._1(), b._1()));

        List<Long> found = new ArrayList<>();
        RepeatedHashes.repeatedPerBucket(shuffled.iterator()).forEachRemaining(found::add);

        List<Long> expected = counts.entrySet().stream()
                .filter(e -> e.getValue() > 1)
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
        assertThat(found).doesNotHaveDuplicates();
        assertThat(found.stream().sorted().toList()).isEqualTo(expected);
        assertThat(expected).hasSizeGreaterThan(1_000);
    }

    @Test
    void aNullValueIsRefusedRatherThanCountedAsZero() {
        Iterator<InternalRow> rows = List.<InternalRow>of(new GenericInternalRow(new Object[] {null}))
                .iterator();
        assertThatThrownBy(() -> RepeatedHashes.bucketed(rows))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NULL");
    }

    private static Iterator<InternalRow> rows(List<Long> values) {
        return values.stream()
                .map(v -> (InternalRow) new GenericInternalRow(new Object[] {v}))
                .iterator();
    }
}
