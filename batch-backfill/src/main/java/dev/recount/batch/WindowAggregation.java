package dev.recount.batch;

import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.negate;
import static org.apache.spark.sql.functions.shiftright;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import dev.recount.core.lake.LakeLayout;
import dev.recount.core.metrics.Metric;
import dev.recount.core.window.WindowAlignment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * The batch layer's window maths, as Spark transformations over lake rows. Metrics come from
 * {@link Metric#sqlContributionAsBigint} and windows follow {@link WindowAlignment}: the same definitions the stream
 * job uses, not a second copy.
 */
public final class WindowAggregation {
    public static final String WINDOW_START = "window_start";
    /** Per event after de-duplication, then summed per window key: how many lake rows (copies) it had. */
    public static final String LAKE_ROWS = "lake_rows";

    private static final String ID_HASH = "id_hash";
    private static final String KEPT = "kept";
    /** Suffixes of the two BIGINT halves a spend sum is added up in ({@link #recombined}). */
    public static final String HIGH_BITS = "_high32";

    public static final String LOW_BITS = "_low32";
    private static final long LOW_32_BITS = 0xFFFF_FFFFL;
    /** Up to this many repeated id hashes are broadcast (~16 bytes each in the hash relation). */
    static final long MAX_BROADCAST_HASHES = 4_000_000;
    /**
     * Up to this many repeated id hashes the corrections per window key (at most a few rows per hash, ~100 bytes
     * each) are broadcast to the whole lake's sums; above, both sides are joined by a shuffle.
     */
    static final long MAX_BROADCAST_CORRECTIONS = 1_000_000;

    private static final String CORRECTION = "correction_";

    private WindowAggregation() {}

    /**
     * {@link WindowAlignment#windowStart} as a column over {@code eventTsColumn}: core's SQL text
     * ({@link WindowAlignment#sqlWindowStart}), the one the benchmarks run in DuckDB and Spark SQL too.
     * {@code WindowColumnTest} checks Spark's result against {@link WindowAlignment#windowStart}, pre-1970 included.
     */
    public static Column windowStart(String eventTsColumn, WindowAlignment windows) {
        return expr(windows.sqlWindowStart(eventTsColumn));
    }

    /**
     * The window rows of {@code lakeRows} (file columns, copies included): per window key every {@link Metric} and
     * {@link #LAKE_ROWS} (as {@link #aggregate}), counting each {@code event_id} once — the copy with the lowest
     * {@code (kafka_topic, kafka_partition, kafka_offset)}, whatever order the files are read in; the remaining
     * fields only break ties between copies with identical coordinates (one Kafka record stored twice).
     *
     * <p>Only events with copies need grouping by id, and they are few (1 % of the lake on a busy day; a replay
     * makes more). So instead of moving every row to its id's partition and ranking it there (a shuffle and sort
     * of the whole lake, which dominated the batch layer's time), the result is
     * <pre>
     *   sums over every row  −  sums over the rows of ids that have copies  +  sums over the copy kept of each
     * </pre>
     * per window key, where the middle and last terms only touch those few rows:
     * <ol>
     *   <li>a 64-bit hash of every {@code event_id} (one narrow column, shipped in buckets of primitive arrays and
     *       sorted per bucket: {@link RepeatedHashes}) finds the hashes that occur more than once;</li>
     *   <li>every row is summed per window key without looking at ids — the one pass over the whole lake;</li>
     *   <li>the rows whose hash repeats (a broadcast semi-join against that small set; a shuffle join above
     *       {@link #MAX_BROADCAST_HASHES}) are summed once to be subtracted, and grouped by the id itself to keep
     *       the least {@code (coordinates, payload)}, which is added back.</li>
     * </ol>
     * The whole lake's sums are one aggregation fed straight by the scan (Spark compiles scan, contributions and
     * partial sums into one loop); the two small terms are aggregated together apart, as signed contributions (the
     * copies' rows negated), and added to the whole lake's sums by a left join on the window key — every key they
     * touch comes from a lake row, so it is a key of the whole lake too; the corrections are broadcast while the
     * repeated hashes are at most {@link #MAX_BROADCAST_CORRECTIONS}. (Summing the union of all three terms at once
     * cost more: Spark does not compile a union into its consumer, so every lake row was written out as a row
     * between the scan and the sums.) Keys left with no event (only copies whose kept copy is in another window)
     * are dropped. Every sum is exact (BIGINT counts, spend as in {@link #aggregate}, ANSI mode), so the difference
     * is exactly the sum over kept copies. The hash only decides which rows take the longer path; the copy kept is
     * decided on the ids, so a hash collision costs a little work and never changes a result
     * ({@code WindowAggregationTest} runs it with hashes that collide for every id, against ranking every row).
     *
     * <p>Assumes the copies of an event share its {@code event_ts} (they are the same event sent twice): callers
     * filter by time first, so only copies inside the range take part.
     *
     * <p>Runs one Spark job at once (finding the repeated hashes); close the result when done with its rows.
     */
    public static Recomputed recompute(Dataset<Row> lakeRows, WindowAlignment windows) {
        return recompute(lakeRows, windows, id -> xxhash64(id), MAX_BROADCAST_HASHES);
    }

    /**
     * As {@link #recompute(Dataset, WindowAlignment)} with another id hash and broadcast limit: tests force
     * collisions with a poor hash, and the shuffle join with a limit of 0.
     */
    static Recomputed recompute(
            Dataset<Row> lakeRows, WindowAlignment windows, UnaryOperator<Column> idHash, long maxBroadcastHashes) {
        requireAnsiMode(lakeRows.sparkSession());
        Dataset<Row> repeated = RepeatedHashes.of(
                        lakeRows.select(idHash.apply(col(LakeLayout.EVENT_ID)).as(ID_HASH)),
                        shufflePartitions(lakeRows.sparkSession()))
                .persist(StorageLevel.MEMORY_AND_DISK());
        long repeatedHashes = repeated.count();
        Dataset<Row> lookup = repeatedHashes <= maxBroadcastHashes ? broadcast(repeated) : repeated;
        Dataset<Row> copies = lakeRows.join(
                        lookup,
                        idHash.apply(lakeRows.col(LakeLayout.EVENT_ID)).equalTo(lookup.col(ID_HASH)),
                        "left_semi")
                .persist(StorageLevel.MEMORY_AND_DISK());

        Dataset<Row> whole = summed(contributions(asSingleCopies(lakeRows), windows, false));
        Dataset<Row> corrections = summed(contributions(asSingleCopies(copies), windows, true)
                .unionByName(contributions(keepLowest(copies), windows, false)));
        boolean broadcastCorrections = repeatedHashes <= Math.min(maxBroadcastHashes, MAX_BROADCAST_CORRECTIONS);
        Dataset<Row> rows = recombined(addedPerWindowKey(whole, corrections, broadcastCorrections))
                .filter(col(Metric.EVENTS.column()).gt(0));
        return new Recomputed(rows, repeated, copies, repeatedHashes);
    }

    /**
     * {@code whole}'s sums plus {@code corrections}'s for the same window key (0 where it has none); every key of
     * {@code corrections} is one of {@code whole}'s. Both have the columns of {@link #summed}.
     */
    private static Dataset<Row> addedPerWindowKey(
            Dataset<Row> whole, Dataset<Row> corrections, boolean broadcastCorrections) {
        List<Column> prefixed = new ArrayList<>();
        for (String c : corrections.columns()) prefixed.add(col(c).as(CORRECTION + c));
        Dataset<Row> added = corrections.select(prefixed.toArray(Column[]::new));
        if (broadcastCorrections) added = broadcast(added);
        Column sameKey = lit(true);
        List<Column> out = new ArrayList<>();
        for (String c : whole.columns()) {
            if (isKeyColumn(c)) {
                sameKey = sameKey.and(whole.col(c).eqNullSafe(added.col(CORRECTION + c)));
                out.add(whole.col(c));
            } else {
                out.add(whole.col(c)
                        .plus(coalesce(added.col(CORRECTION + c), lit(0L)))
                        .as(c));
            }
        }
        return whole.join(added, sameKey, "left_outer").select(out.toArray(Column[]::new));
    }

    private static int shufflePartitions(SparkSession spark) {
        return Integer.parseInt(spark.conf().get("spark.sql.shuffle.partitions"));
    }

    /** Lake rows as events of one copy each (what {@link #aggregate} sums). Public for the benchmark's old plan. */
    public static Dataset<Row> asSingleCopies(Dataset<Row> lakeRows) {
        return lakeRows.select(
                col(LakeLayout.EVENT_TS),
                col(LakeLayout.EVENT_TYPE),
                col(LakeLayout.CAMPAIGN_ID),
                col(LakeLayout.CHANNEL_ID),
                col(LakeLayout.COST_MICROS),
                lit(1L).as(LAKE_ROWS));
    }

    /**
     * Per {@code event_id}, its least copy by (coordinates, payload): min over a struct compares field by field.
     * Public for the benchmark's old plan, which keeps the same copy.
     */
    public static Dataset<Row> keepLowest(Dataset<Row> copies) {
        return copies.groupBy(col(LakeLayout.EVENT_ID))
                .agg(
                        min(struct(
                                        col(LakeLayout.KAFKA_TOPIC),
                                        col(LakeLayout.KAFKA_PARTITION),
                                        col(LakeLayout.KAFKA_OFFSET),
                                        col(LakeLayout.EVENT_TS),
                                        col(LakeLayout.EVENT_TYPE),
                                        col(LakeLayout.CAMPAIGN_ID),
                                        col(LakeLayout.CHANNEL_ID),
                                        col(LakeLayout.COST_MICROS)))
                                .as(KEPT),
                        count(lit(1)).as(LAKE_ROWS))
                .select(
                        col(KEPT + "." + LakeLayout.EVENT_TS).as(LakeLayout.EVENT_TS),
                        col(KEPT + "." + LakeLayout.EVENT_TYPE).as(LakeLayout.EVENT_TYPE),
                        col(KEPT + "." + LakeLayout.CAMPAIGN_ID).as(LakeLayout.CAMPAIGN_ID),
                        col(KEPT + "." + LakeLayout.CHANNEL_ID).as(LakeLayout.CHANNEL_ID),
                        col(KEPT + "." + LakeLayout.COST_MICROS).as(LakeLayout.COST_MICROS),
                        col(LAKE_ROWS));
    }

    private static List<Column> keyColumns() {
        return List.of(col(WINDOW_START), col(LakeLayout.CAMPAIGN_ID), col(LakeLayout.CHANNEL_ID));
    }

    /**
     * Per row of {@code events} (event columns and {@link #LAKE_ROWS}): its window key and what it adds to each sum,
     * negated if {@code negate}. Every value is a BIGINT ({@link Metric#sqlContributionAsBigint}); a metric that is
     * not a count (spend) is split into its high and low 32 bits ({@link #HIGH_BITS}, {@link #LOW_BITS}), so its sum
     * is two BIGINT sums that {@link #recombined} puts back together exactly.
     */
    public static Dataset<Row> contributions(Dataset<Row> events, WindowAlignment windows, boolean negate) {
        UnaryOperator<Column> sign = c -> negate ? negate(c) : c;
        List<Column> out = new ArrayList<>();
        out.add(windowStart(LakeLayout.EVENT_TS, windows).as(WINDOW_START));
        out.add(col(LakeLayout.CAMPAIGN_ID));
        out.add(col(LakeLayout.CHANNEL_ID));
        for (Metric m : Metric.values()) {
            Column value = expr(m.sqlContributionAsBigint(LakeLayout.EVENT_TYPE, LakeLayout.COST_MICROS));
            if (m.isCount()) {
                out.add(sign.apply(value).as(m.column()));
            } else {
                out.add(sign.apply(shiftright(value, 32)).as(m.column() + HIGH_BITS));
                out.add(sign.apply(value.bitwiseAND(LOW_32_BITS)).as(m.column() + LOW_BITS));
            }
        }
        out.add(sign.apply(col(LAKE_ROWS)).as(LAKE_ROWS));
        return events.select(out.toArray(Column[]::new));
    }

    /**
     * {@link #contributions} (or sums of them) summed per window key: the key columns and every other column's sum,
     * named as before; spend still as its two halves ({@link #recombined} puts them together).
     */
    private static Dataset<Row> summed(Dataset<Row> contributions) {
        List<Column> sums = new ArrayList<>();
        for (String c : contributions.columns()) {
            if (!isKeyColumn(c)) sums.add(sum(col(c)).as(c));
        }
        return contributions
                .groupBy(keyColumns().toArray(Column[]::new))
                .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new));
    }

    private static boolean isKeyColumn(String column) {
        return column.equals(WINDOW_START)
                || column.equals(LakeLayout.CAMPAIGN_ID)
                || column.equals(LakeLayout.CHANNEL_ID);
    }

    /**
     * {@link #summed} rows with every metric of its {@link Metric#sqlType()}, columns as {@link #aggregate}
     * documents.
     *
     * <p>Spend: a value v is {@code (v >> 32) * 2^32 + (v & 0xFFFFFFFF)} exactly (arithmetic shift, so for negative
     * values too), hence its sum is {@code sum(high) * 2^32 + sum(low)}, put together as DECIMAL(38,0) once per key.
     * Summing DECIMAL(38,0) per row (Spark's decimals above 18 digits are java.math.BigDecimal) cost about a fifth of
     * the whole-lake pass. Each half sum is a BIGINT that cannot overflow below 2^31 rows per key (|high| and low are
     * below 2^32); beyond that ANSI mode fails the run rather than wrap.
     */
    private static Dataset<Row> recombined(Dataset<Row> summed) {
        List<Column> out = new ArrayList<>(keyColumns());
        for (Metric m : Metric.values()) {
            if (m.isCount()) {
                out.add(col(m.column()));
            } else {
                String high = m.column() + HIGH_BITS;
                String low = m.column() + LOW_BITS;
                out.add(expr("CAST(CAST(" + high + " AS " + m.sqlType() + ") * " + (1L << 32) + " + CAST(" + low
                                + " AS " + m.sqlType() + ") AS " + m.sqlType() + ")")
                        .as(m.column()));
            }
        }
        out.add(col(LAKE_ROWS));
        return summed.select(out.toArray(Column[]::new));
    }

    /** The window rows of a recompute ({@link #rows()}) and the cached sets they read; {@link #close()} frees them. */
    public static final class Recomputed implements AutoCloseable {
        private final Dataset<Row> rows;
        private final Dataset<Row> repeated;
        private final Dataset<Row> copies;
        private final long repeatedHashes;

        /** Also built by the bench's earlier plans, which cache the same two sets. */
        public Recomputed(Dataset<Row> rows, Dataset<Row> repeated, Dataset<Row> copies, long repeatedHashes) {
            this.rows = rows;
            this.repeated = repeated;
            this.copies = copies;
            this.repeatedHashes = repeatedHashes;
        }

        /** Per window key: window_start, campaign_id, channel_id, every metric, lake_rows. */
        public Dataset<Row> rows() {
            return rows;
        }

        /** How many id hashes occur more than once (events with copies, and ids that collide). */
        public long repeatedHashes() {
            return repeatedHashes;
        }

        @Override
        public void close() {
            copies.unpersist();
            repeated.unpersist();
        }
    }

    /**
     * Per window key {@code (window_start, campaign_id, channel_id)}: every {@link Metric} (column named
     * {@link Metric#column()}, of type {@link Metric#sqlType()}: BIGINT counts, a DECIMAL(38,0) spend) summed over
     * de-duplicated events (spend added up exactly in two BIGINT halves: {@link #recombined}), and
     * {@link #LAKE_ROWS}. {@code window_start} is epoch milliseconds. The session must
     * run in ANSI mode ({@link SparkSessions#ANSI_MODE}), so an overflowing sum fails the run instead of wrapping.
     */
    public static Dataset<Row> aggregate(Dataset<Row> deduplicated, WindowAlignment windows) {
        requireAnsiMode(deduplicated.sparkSession());
        return recombined(summed(contributions(deduplicated, windows, false)));
    }

    /** Refuses a session that would wrap a BIGINT sum or turn an overflowing decimal sum into NULL. */
    static void requireAnsiMode(SparkSession spark) {
        if (!"true".equalsIgnoreCase(spark.conf().get(SparkSessions.ANSI_MODE, "false"))) {
            throw new IllegalStateException("the Spark session must run with " + SparkSessions.ANSI_MODE
                    + "=true: without it an overflowing sum is wrapped or NULL instead of an error");
        }
    }
}
