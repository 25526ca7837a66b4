package dev.recount.batch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import scala.Tuple2;

/**
 * The values of a BIGINT column that occur more than once, each once: how {@link WindowAggregation#recompute} finds
 * the id hashes that have copies.
 *
 * <p>Moving every value through Spark's shuffle as a row of its own and sorting all of them (a 20-million-row shuffle
 * and sort: two thirds of the time of this step on a day of the lake) is not needed to find repeats. Each map task
 * reads its values as primitives ({@code InternalRow}s, no {@code Row} per value), splits them by their top
 * {@value #BUCKET_BITS} bits into {@value #BUCKETS} buckets and ships each bucket as one {@code long[]}; every value
 * of a bucket meets the others in one reduce task, which sorts the bucket (a primitive sort of an array that fits a
 * CPU cache on a day, not a row sort) and keeps the values found twice. The shuffle moves a few thousand arrays
 * instead of one record per value. A reduce task holds one bucket's values at a time (1/{@value #BUCKETS} of them),
 * so months of lake rows stay within a task's memory; a map task holds the values of its input split.
 *
 * <p>Exact for any values: a value's bucket depends on the value only, so all its occurrences meet in one sort.
 */
final class RepeatedHashes {
    static final int BUCKET_BITS = 10;
    static final int BUCKETS = 1 << BUCKET_BITS;

    private RepeatedHashes() {}

    /** The repeated values of {@code values}'s only column (BIGINT, no NULLs), as a one-column frame named as it. */
    static Dataset<Row> of(Dataset<Row> values, int reducePartitions) {
        if (values.schema().fields().length != 1) {
            throw new IllegalArgumentException("values must have exactly one column, got " + values.schema());
        }
        if (reducePartitions < 1) {
            throw new IllegalArgumentException("reducePartitions must be at least 1, got " + reducePartitions);
        }
        String name = values.schema().fields()[0].name();
        JavaRDD<InternalRow> rows = values.queryExecution().toRdd().toJavaRDD();
        JavaRDD<Long> repeated = rows.mapPartitionsToPair(RepeatedHashes::bucketed)
                .repartitionAndSortWithinPartitions(new ByBucket(reducePartitions))
                .mapPartitions(RepeatedHashes::repeatedPerBucket);
        return values.sparkSession()
                .createDataset(repeated.rdd(), Encoders.LONG())
                .toDF(name);
    }

    /** One map task's values as (bucket, its values) for every bucket that has some. */
    static Iterator<Tuple2<Integer, long[]>> bucketed(Iterator<InternalRow> rows) {
        long[] all = new long[1 << 16];
        int n = 0;
        int[] counts = new int[BUCKETS];
        while (rows.hasNext()) {
            InternalRow row = rows.next();
            if (row.isNullAt(0)) throw new IllegalArgumentException("values must not be NULL");
            long v = row.getLong(0);
            if (n == all.length) all = Arrays.copyOf(all, n * 2);
            all[n++] = v;
            counts[bucket(v)]++;
        }
        long[][] buckets = new long[BUCKETS][];
        for (int b = 0; b < BUCKETS; b++) if (counts[b] > 0) buckets[b] = new long[counts[b]];
        int[] filled = new int[BUCKETS];
        for (int i = 0; i < n; i++) {
            int b = bucket(all[i]);
            buckets[b][filled[b]++] = all[i];
        }
        List<Tuple2<Integer, long[]>> out = new ArrayList<>();
        for (int b = 0; b < BUCKETS; b++) if (buckets[b] != null) out.add(new Tuple2<>(b, buckets[b]));
        return out.iterator();
    }

    /**
     * Over (bucket, values) sorted by bucket: per bucket, every value that occurs more than once in all of its
     * arrays, once. Reads one bucket at a time, as its repeats are asked for.
     */
    static Iterator<Long> repeatedPerBucket(Iterator<Tuple2<Integer, long[]>> sortedByBucket) {
        return new Iterator<>() {
            private final List<long[]> bucket = new ArrayList<>();
            private Tuple2<Integer, long[]> ahead = sortedByBucket.hasNext() ? sortedByBucket.next() : null;
            private long[] repeats = new long[0];
            private int at;

            @Override
            public boolean hasNext() {
                while (at == repeats.length && ahead != null) {
                    int current = ahead._1();
                    bucket.clear();
                    while (ahead != null && ahead._1() == current) {
                        bucket.add(ahead._2());
                        ahead = sortedByBucket.hasNext() ? sortedByBucket.next() : null;
                    }
                    repeats = repeats(bucket);
                    at = 0;
                }
                return at < repeats.length;
            }

            @Override
            public Long next() {
                if (!hasNext()) throw new NoSuchElementException();
                return repeats[at++];
            }
        };
    }

    /** The values that occur more than once in {@code parts} together, each once. */
    static long[] repeats(List<long[]> parts) {
        int size = 0;
        for (long[] p : parts) size += p.length;
        long[] all = new long[size];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        Arrays.sort(all);
        long[] repeated = new long[size / 2];
        int found = 0;
        for (int i = 1; i < size; i++) {
            if (all[i] == all[i - 1] && (i == 1 || all[i - 2] != all[i])) repeated[found++] = all[i];
        }
        return Arrays.copyOf(repeated, found);
    }

    static int bucket(long value) {
        return (int) (value >>> (Long.SIZE - BUCKET_BITS));
    }

    /** Buckets to reduce partitions, round robin (so partitions get buckets from all of the value range). */
    static final class ByBucket extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final int partitions;

        ByBucket(int partitions) {
            this.partitions = partitions;
        }

        @Override
        public int numPartitions() {
            return partitions;
        }

        @Override
        public int getPartition(Object bucket) {
            return (Integer) bucket % partitions;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ByBucket b && b.partitions == partitions;
        }

        @Override
        public int hashCode() {
            return partitions;
        }
    }
}
