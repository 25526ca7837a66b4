package dev.recount.bench;

import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.negate;
import static org.apache.spark.sql.functions.shiftright;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import dev.recount.batch.WindowAggregation;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Measure;
import dev.recount.core.window.WindowAlignment;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.UnaryOperator;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;

/**
 * {@code WindowAggregation.recompute} as it was before its last two changes, kept to measure against: every id hash
 * a row of Spark's shuffle, sorted within its reduce partition, repeats read off the sorted run
 * ({@link RepeatedValues}); and the three terms (every row, minus the copies, plus the copy kept) summed as one
 * union of signed contributions per window key. The semi-join for the copies' rows and the spend in two BIGINT
 * halves are as now.
 */
final class SortedHashRecompute {
    private static final String WINDOW_START = WindowAggregation.WINDOW_START;
    /** Per event after de-duplication, then summed per window key: how many lake rows (copies) it had. */
    private static final String LAKE_ROWS = WindowAggregation.LAKE_ROWS;

    private static final String ID_HASH = "id_hash";
    private static final String KEPT = "kept";
    /** Suffixes of the two BIGINT halves a spend sum is added up in ({@link #sumPerWindowKey}). */
    private static final String HIGH_BITS = "_high32";

    private static final String LOW_BITS = "_low32";

    private static final long LOW_32_BITS = 0xFFFF_FFFFL;
    /** Up to this many repeated id hashes are broadcast (~16 bytes each in the hash relation). */
    static final long MAX_BROADCAST_HASHES = 4_000_000;

    private SortedHashRecompute() {}

    /** The window rows of the default set and the cached sets they read; {@link #close()} frees them. */
    record Recomputed(Dataset<Row> rows, Dataset<Row> repeated, Dataset<Row> copies) implements AutoCloseable {
        @Override
        public void close() {
            copies.unpersist();
            repeated.unpersist();
        }
    }

    /** The plan of {@code WindowAggregation.recompute} before this change (see the class comment). */
    public static Recomputed recompute(Dataset<Row> lakeRows, WindowAlignment windows) {
        return recompute(lakeRows, windows, id -> xxhash64(id), MAX_BROADCAST_HASHES);
    }

    static Recomputed recompute(
            Dataset<Row> lakeRows, WindowAlignment windows, UnaryOperator<Column> idHash, long maxBroadcastHashes) {
        Dataset<Row> repeated = lakeRows.select(
                        idHash.apply(col(LakeLayout.EVENT_ID)).as(ID_HASH))
                .repartition(col(ID_HASH))
                .sortWithinPartitions(col(ID_HASH))
                .mapPartitions(new RepeatedValues(), Encoders.LONG())
                .toDF(ID_HASH)
                .persist(StorageLevel.MEMORY_AND_DISK());
        long repeatedHashes = repeated.count();
        Dataset<Row> lookup = repeatedHashes <= maxBroadcastHashes ? broadcast(repeated) : repeated;
        Dataset<Row> copies = lakeRows.join(
                        lookup,
                        idHash.apply(lakeRows.col(LakeLayout.EVENT_ID)).equalTo(lookup.col(ID_HASH)),
                        "left_semi")
                .persist(StorageLevel.MEMORY_AND_DISK());

        Dataset<Row> signed = contributions(PreviousRecompute.asSingleCopies(lakeRows), windows, false)
                .unionByName(contributions(PreviousRecompute.asSingleCopies(copies), windows, true))
                .unionByName(contributions(PreviousRecompute.keepLowest(copies), windows, false));
        Dataset<Row> rows = sumPerWindowKey(signed).filter(col(Measure.EVENTS).gt(0));
        return new Recomputed(rows, repeated, copies);
    }

    /**
     * Per event (one copy each, with {@link #LAKE_ROWS}): its window key and what it adds to each measure of the
     * default set, a sum as its two BIGINT halves, negated if {@code negate}.
     */
    private static Dataset<Row> contributions(Dataset<Row> events, WindowAlignment windows, boolean negate) {
        List<Column> out = new ArrayList<>();
        out.add(WindowAggregation.windowStart(LakeLayout.EVENT_TS, windows).as(WINDOW_START));
        out.add(col(LakeLayout.CAMPAIGN_ID));
        out.add(col(LakeLayout.CHANNEL_ID));
        for (Measure m : DefaultSet.SET.measures()) {
            Column value = expr(DefaultSet.sqlContribution(m, Measure.COUNT_SQL_TYPE));
            if (m.isCount()) {
                out.add(signed(value, negate).as(m.name()));
            } else {
                out.add(signed(shiftright(value, 32), negate).as(m.name() + HIGH_BITS));
                out.add(signed(value.bitwiseAND(LOW_32_BITS), negate).as(m.name() + LOW_BITS));
            }
        }
        out.add(signed(col(LAKE_ROWS), negate).as(LAKE_ROWS));
        return events.select(out.toArray(Column[]::new));
    }

    private static Column signed(Column c, boolean negate) {
        return negate ? negate(c) : c;
    }

    private static List<Column> keyColumns() {
        return List.of(col(WINDOW_START), col(LakeLayout.CAMPAIGN_ID), col(LakeLayout.CHANNEL_ID));
    }

    /**
     * {@link #contributions} summed per window key: the key, each measure, {@code lake_rows}.
     *
     * <p>Spend: a value v is {@code (v >> 32) * 2^32 + (v & 0xFFFFFFFF)} exactly (arithmetic shift, so for negative
     * values too), hence its sum is {@code sum(high) * 2^32 + sum(low)}, put together as DECIMAL(38,0) once per key.
     * Summing DECIMAL(38,0) per row (Spark's decimals above 18 digits are java.math.BigDecimal) cost about a fifth of
     * the whole-lake pass. Each half sum is a BIGINT that cannot overflow below 2^31 rows per key (|high| and low are
     * below 2^32); beyond that ANSI mode fails the run rather than wrap.
     */
    private static Dataset<Row> sumPerWindowKey(Dataset<Row> contributions) {
        List<Column> sums = new ArrayList<>();
        List<Column> out = new ArrayList<>(keyColumns());
        for (Measure m : DefaultSet.SET.measures()) {
            if (m.isCount()) {
                sums.add(sum(col(m.name())).as(m.name()));
                out.add(col(m.name()));
            } else {
                String high = m.name() + HIGH_BITS;
                String low = m.name() + LOW_BITS;
                sums.add(sum(col(high)).as(high));
                sums.add(sum(col(low)).as(low));
                out.add(expr("CAST(CAST(" + high + " AS " + m.sqlType() + ") * " + (1L << 32) + " + CAST(" + low
                                + " AS " + m.sqlType() + ") AS " + m.sqlType() + ")")
                        .as(m.name()));
            }
        }
        sums.add(sum(col(LAKE_ROWS)).as(LAKE_ROWS));
        out.add(col(LAKE_ROWS));
        return contributions
                .groupBy(keyColumns().toArray(Column[]::new))
                .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new))
                .select(out.toArray(Column[]::new));
    }

    /**
     * Over values sorted within a partition (equal values adjacent), each value that occurs more than once, once.
     * Streams: Spark's sort spills, so a partition never has to fit in memory. Public for the benchmark that runs
     * the previous plan beside this one.
     */
    public static final class RepeatedValues implements MapPartitionsFunction<Row, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Iterator<Long> call(Iterator<Row> sorted) {
            return new Iterator<>() {
                private boolean pending;
                private long next;
                private boolean started;
                private long previous;
                private boolean emitted;

                @Override
                public boolean hasNext() {
                    while (!pending && sorted.hasNext()) {
                        long v = sorted.next().getLong(0);
                        if (started && v == previous) {
                            if (!emitted) {
                                next = v;
                                pending = true;
                                emitted = true;
                            }
                        } else {
                            emitted = false;
                        }
                        previous = v;
                        started = true;
                    }
                    return pending;
                }

                @Override
                public Long next() {
                    if (!hasNext()) throw new NoSuchElementException();
                    pending = false;
                    return next;
                }
            };
        }
    }

    /** count(*), sum(events), sum(lake_rows) of the window rows. */
    static Row totals(Dataset<Row> lakeRows, WindowAlignment windows) {
        try (Recomputed r = recompute(lakeRows, windows)) {
            r.rows().createOrReplaceTempView("windows");
            return lakeRows.sparkSession()
                    .sql("SELECT count(*), sum(events), sum(lake_rows), bit_xor(xxhash64(*)) FROM windows")
                    .first();
        }
    }
}
