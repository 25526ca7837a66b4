package dev.recount.batch;

import static org.apache.spark.sql.functions.array;
import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.explode;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.negate;
import static org.apache.spark.sql.functions.shiftright;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowAlignment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.storage.StorageLevel;

/**
 * The batch layer's window maths, as Spark transformations over lake rows, for any metric set: per window of the set
 * and value of its dimensions, every measure, from the set's own definition ({@link LakeSetColumns}: {@link
 * Measure#sqlContribution}, {@link WindowAlignment#sqlWindowStart}) — the definitions the stream job uses, not a
 * second copy.
 */
public final class WindowAggregation {
    public static final String WINDOW_START = "window_start";
    /** Per event after de-duplication, then summed per window key: how many lake rows (copies) it had. */
    public static final String LAKE_ROWS = "lake_rows";
    /**
     * Per window key: the events left out of the set because an attribute it reads is invalid. Starts with '_', so no
     * dimension or measure (a strict identifier) can have its name.
     */
    public static final String LEFT_OUT = "_left_out";

    private static final String ID_HASH = "id_hash";
    private static final String KEPT = "kept";
    /** In a plan over several sets: which set a row of the shared aggregation is for (its index). */
    private static final String SET = "_set";
    /** In a plan with per-set row filters: whether the row counts for the set at all. */
    private static final String TAKEN = "_taken";

    private static final String CONTRIBUTION = "_contribution";
    private static final String DIMENSION = "_d";
    private static final String MEASURE = "_m";
    /** Suffix of the high half of a sum's slot: a sum is added up as two BIGINT halves ({@link #rowsOfSet}). */
    private static final String HIGH_BITS = "_high32";

    private static final long LOW_32_BITS = 0xFFFF_FFFFL;
    /** Up to this many repeated id hashes are broadcast (~16 bytes each in the hash relation). */
    static final long MAX_BROADCAST_HASHES = 4_000_000;
    /**
     * Up to this many repeated id hashes the corrections per window key (at most a few rows per hash and set, ~100
     * bytes each) are broadcast to the whole lake's sums; above, both sides are joined by a shuffle.
     */
    static final long MAX_BROADCAST_CORRECTIONS = 1_000_000;

    private static final String CORRECTION = "correction_";

    /**
     * How the sets of one run meet the lake; {@link #DEFAULT_PLAN} is the one taken. Measured with {@code
     * WindowAggregationPlanTiming} ({@code local[2]} on this 2-core machine; one day of 2 000 000 events, 1 % sent
     * twice, half of them with attributes; the three sets of {@code TestSets.THREE_SETS}: the default set, campaign x
     * slot_id per 5 minutes, channel x country with a sum of quantity; the whole recompute with each set's totals and
     * stored rows counted; four rounds, wall then process CPU seconds):
     *
     * <ul>
     *   <li>on the quiet machine: one set 4.3 to 6.2 s (7.5 to 10.8 CPU s); three sets {@link #ONE_SCAN_PER_SET}
     *       10.7 to 14.8 s (18.5 to 26.2), {@link #ONE_SCAN_ALL_SETS} 10.6 to 14.7 s (18.6 to 26.4): the same within
     *       the rounds' noise (at most 6 % apart);</li>
     *   <li>while other builds ran on it (load average 6 to 10): three sets one scan per set 20 to 30 CPU s, one scan
     *       for all 24 to 29; the per-set plan the cheaper in three rounds of four, by 8 to 17 %.</li>
     * </ul>
     *
     * Decoding a few columns of the lake again costs about what one scan for all costs instead: three rows per lake
     * row into one aggregation, each row as wide as the widest set (a sum's two halves wherever any set sums), a struct
     * built per set and row for the {@code explode}. What decides is memory: one scan for all holds every set's keys
     * in one hash table at once (1.4 million here, against at most 0.7 million for any one set), which spills first as
     * sets are added; per set, each aggregation holds its own keys only, and a set that reads no attribute never runs
     * the attributes' UDF. The repeated ids and their copies are found once for all sets either way.
     */
    enum Plan {
        /** Each set aggregates its own scan of the lake (the copies and their de-duplication are shared). */
        ONE_SCAN_PER_SET,
        /** One scan of the lake feeds every set: a row per set and lake row, one aggregation keyed by the set. */
        ONE_SCAN_ALL_SETS
    }

    static final Plan DEFAULT_PLAN = Plan.ONE_SCAN_PER_SET;

    /**
     * One set of a recompute, and which lake rows count for it: null for all of them (a range run reads exactly its
     * range), else a predicate over lake rows (an {@code affected} run recomputes different windows per set).
     */
    public record SetScope(MetricSet set, Column rows) {
        public SetScope {
            Objects.requireNonNull(set, "set");
        }

        public static SetScope all(MetricSet set) {
            return new SetScope(set, null);
        }

        /** Every set of {@code sets} over all the rows. */
        public static List<SetScope> allOf(List<MetricSet> sets) {
            return sets.stream().map(SetScope::all).toList();
        }
    }

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
     * The window rows of every set of {@code scopes} over {@code lakeRows} (file columns, copies included): per window
     * key of a set, every measure of the set, {@link #LAKE_ROWS} and {@link #LEFT_OUT}, counting each {@code
     * event_id} once — the copy with the lowest {@code (kafka_topic, kafka_partition, kafka_offset)}, whatever order
     * the files are read in; the remaining fields only break ties between copies with identical coordinates (one
     * Kafka record stored twice).
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
     *       sorted per bucket: {@link RepeatedHashes}) finds the hashes that occur more than once — once per run,
     *       for every set;</li>
     *   <li>every row is summed per window key without looking at ids — the one pass over the whole lake per set
     *       ({@link Plan});</li>
     *   <li>the rows whose hash repeats (a broadcast semi-join against that small set; a shuffle join above
     *       {@link #MAX_BROADCAST_HASHES}), read once for every set, are summed to be subtracted, and grouped by the
     *       id itself to keep the least {@code (coordinates, payload)}, which is added back.</li>
     * </ol>
     * The whole lake's sums are one aggregation fed straight by the scan (Spark compiles scan, contributions and
     * partial sums into one loop); the two small terms are aggregated together apart, as signed contributions (the
     * copies' rows negated), and added to the whole lake's sums by a left join on the window key — every key they
     * touch comes from a lake row, so it is a key of the whole lake too; the corrections are broadcast while the
     * repeated hashes are at most {@link #MAX_BROADCAST_CORRECTIONS}. (Summing the union of all three terms at once
     * cost more: Spark does not compile a union into its consumer, so every lake row was written out as a row
     * between the scan and the sums.) Every sum is exact (BIGINT counts, sums as two BIGINT halves, ANSI mode), so
     * the difference is exactly the sum over kept copies. The hash only decides which rows take the longer path; the
     * copy kept is decided on the ids, so a hash collision costs a little work and never changes a result
     * ({@code WindowAggregationTest} runs it with hashes that collide for every id, against ranking every row).
     *
     * <p>A set reading declared attributes resolves them from the kept copy ({@link DeclaredAttributes}); an event
     * whose value breaks an attribute's rule counts in {@link #LEFT_OUT} instead of the set's measures. The rows of
     * {@link Recomputed#rows} keep every key, those without any event too (only copies whose kept copy is in another
     * window, or only events left out): their lake rows and left-out events belong in the totals; {@link
     * Recomputed#stored} drops them.
     *
     * <p>Assumes the copies of an event share its {@code event_ts} (they are the same event sent twice): callers
     * filter by time first, so only copies inside the range take part, and a scope's predicate (of time) takes all
     * copies of an event or none.
     *
     * <p>Runs one Spark job at once (finding the repeated hashes); close the result when done with its rows.
     *
     * @param declared the declared attributes (the definitions' {@code attributes()})
     */
    public static Recomputed recompute(Dataset<Row> lakeRows, List<SetScope> scopes, List<Attribute> declared) {
        return recompute(lakeRows, scopes, declared, DEFAULT_PLAN, id -> xxhash64(id), MAX_BROADCAST_HASHES);
    }

    /**
     * As {@link #recompute(Dataset, List, List)} with another plan, id hash and broadcast limit: tests compare the
     * plans, force collisions with a poor hash, and the shuffle join with a limit of 0.
     */
    static Recomputed recompute(
            Dataset<Row> lakeRows,
            List<SetScope> scopes,
            List<Attribute> declared,
            Plan plan,
            UnaryOperator<Column> idHash,
            long maxBroadcastHashes) {
        if (scopes.isEmpty()) throw new IllegalArgumentException("no metric set to recompute");
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
        boolean broadcastCorrections = repeatedHashes <= Math.min(maxBroadcastHashes, MAX_BROADCAST_CORRECTIONS);

        Map<MetricSet, Dataset<Row>> rows = new LinkedHashMap<>();
        List<Dataset<Row>> cached = new ArrayList<>(List.of(repeated, copies));
        List<List<SetScope>> groups = plan == Plan.ONE_SCAN_ALL_SETS
                ? List.of(scopes)
                : scopes.stream().map(List::of).toList();
        for (List<SetScope> group : groups) {
            Layout layout = new Layout(group, declared);
            Dataset<Row> whole = summed(layout.contributions(asSingleCopies(lakeRows), false), layout);
            Dataset<Row> corrections = summed(
                    layout.contributions(asSingleCopies(copies), true)
                            .unionByName(layout.contributions(keepLowest(copies), false)),
                    layout);
            Dataset<Row> added = addedPerWindowKey(whole, corrections, layout, broadcastCorrections)
                    .persist(StorageLevel.MEMORY_AND_DISK());
            cached.add(added);
            for (int i = 0; i < group.size(); i++) rows.put(group.get(i).set(), layout.rowsOfSet(added, i));
        }
        return new Recomputed(rows, cached, repeatedHashes);
    }

    /**
     * {@code whole}'s sums plus {@code corrections}'s for the same window key (0 where it has none); every key of
     * {@code corrections} is one of {@code whole}'s. Both have the columns of {@link #summed}.
     */
    private static Dataset<Row> addedPerWindowKey(
            Dataset<Row> whole, Dataset<Row> corrections, Layout layout, boolean broadcastCorrections) {
        List<Column> prefixed = new ArrayList<>();
        for (String c : corrections.columns()) prefixed.add(col(c).as(CORRECTION + c));
        Dataset<Row> added = corrections.select(prefixed.toArray(Column[]::new));
        if (broadcastCorrections) added = broadcast(added);
        Column sameKey = lit(true);
        List<Column> out = new ArrayList<>();
        for (String c : whole.columns()) {
            if (layout.isKeyColumn(c)) {
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

    /** The lake columns an event's contributions may read: the contract's and the attributes' JSON. */
    private static final String[] PAYLOAD = {
        LakeLayout.EVENT_TS,
        LakeLayout.EVENT_TYPE,
        LakeLayout.CAMPAIGN_ID,
        LakeLayout.CHANNEL_ID,
        LakeLayout.COST_MICROS,
        LakeLayout.REQUEST_ID,
        LakeLayout.ATTRIBUTES
    };

    /** Lake rows as events of one copy each (what the sums add up); Spark reads only the columns a set uses. */
    static Dataset<Row> asSingleCopies(Dataset<Row> lakeRows) {
        List<Column> out = new ArrayList<>();
        for (String c : PAYLOAD) out.add(col(c));
        out.add(lit(1L).as(LAKE_ROWS));
        return lakeRows.select(out.toArray(Column[]::new));
    }

    /** Per {@code event_id}, its least copy by (coordinates, payload): min over a struct compares field by field. */
    static Dataset<Row> keepLowest(Dataset<Row> copies) {
        List<Column> order = new ArrayList<>(
                List.of(col(LakeLayout.KAFKA_TOPIC), col(LakeLayout.KAFKA_PARTITION), col(LakeLayout.KAFKA_OFFSET)));
        List<Column> kept = new ArrayList<>();
        for (String c : PAYLOAD) {
            order.add(col(c));
            kept.add(col(KEPT + "." + c).as(c));
        }
        kept.add(col(LAKE_ROWS));
        return copies.groupBy(col(LakeLayout.EVENT_ID))
                .agg(
                        min(struct(order.toArray(Column[]::new))).as(KEPT),
                        count(lit(1)).as(LAKE_ROWS))
                .select(kept.toArray(Column[]::new));
    }

    /** {@code contributions} summed per window key: the key columns and every other column's sum, named as before. */
    private static Dataset<Row> summed(Dataset<Row> contributions, Layout layout) {
        List<Column> sums = new ArrayList<>();
        for (String c : contributions.columns()) {
            if (!layout.isKeyColumn(c)) sums.add(sum(col(c)).as(c));
        }
        return contributions
                .groupBy(layout.keyColumns().stream()
                        .map(org.apache.spark.sql.functions::col)
                        .toArray(Column[]::new))
                .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new));
    }

    /**
     * The columns one aggregation over the sets of a plan shares: {@link #WINDOW_START} (each set's own windows),
     * {@code _d<i>} for dimension {@code i} of whichever set (null where a set has fewer), {@code _m<j>} for measure
     * {@code j} (0 where a set has fewer), with {@code _m<j>_high32} where some set's measure {@code j} is a sum,
     * {@link #LAKE_ROWS} and {@link #LEFT_OUT}; with several sets also {@code _set}, the set's index, first in the key.
     *
     * <p>A sum is added up in two BIGINT halves: a value v is {@code (v >> 32) * 2^32 + (v & 0xFFFFFFFF)} exactly
     * (arithmetic shift, so for negative values too), hence its sum is {@code sum(high) * 2^32 + sum(low)}, put
     * together as DECIMAL(38,0) once per key ({@link #rowsOfSet}). Summing DECIMAL(38,0) per row (Spark's decimals
     * above 18 digits are java.math.BigDecimal) cost about a fifth of the whole-lake pass. Each half sum is a BIGINT
     * that cannot overflow below 2^31 rows per key (|high| and low are below 2^32); beyond that ANSI mode fails the
     * run rather than wrap.
     */
    private static final class Layout {
        private final List<SetScope> scopes;
        private final List<LakeSetColumns> sets = new ArrayList<>();
        private final DeclaredAttributes attributes;
        private final int dimensions;
        private final boolean[] slotHasHigh;
        private final boolean filtered;

        Layout(List<SetScope> scopes, List<Attribute> declared) {
            this.scopes = scopes;
            int dims = 0;
            int slots = 0;
            boolean anyFilter = false;
            for (SetScope s : scopes) {
                sets.add(new LakeSetColumns(s.set()));
                dims = Math.max(dims, s.set().dimensions().size());
                slots = Math.max(slots, s.set().measures().size());
                anyFilter |= s.rows() != null;
            }
            this.dimensions = dims;
            this.slotHasHigh = new boolean[slots];
            for (SetScope s : scopes) {
                List<Measure> ms = s.set().measures();
                for (int j = 0; j < ms.size(); j++) slotHasHigh[j] |= !ms.get(j).isCount();
            }
            this.filtered = anyFilter && scopes.size() > 1;
            this.attributes =
                    DeclaredAttributes.usedBy(scopes.stream().map(SetScope::set).toList(), declared);
        }

        boolean several() {
            return scopes.size() > 1;
        }

        List<String> keyColumns() {
            List<String> keys = new ArrayList<>();
            if (several()) keys.add(SET);
            keys.add(WINDOW_START);
            for (int i = 0; i < dimensions; i++) keys.add(DIMENSION + i);
            return keys;
        }

        boolean isKeyColumn(String c) {
            return c.equals(SET) || c.equals(WINDOW_START) || c.startsWith(DIMENSION);
        }

        /**
         * Per row of {@code events} (one copy each, with {@link #LAKE_ROWS}): per set of the plan, its window key and
         * what the row adds to each of its sums, negated if {@code negate}.
         */
        Dataset<Row> contributions(Dataset<Row> events, boolean negate) {
            if (!several()) {
                SetScope only = scopes.get(0);
                Dataset<Row> rows = attributes.addTo(only.rows() == null ? events : events.filter(only.rows()));
                return rows.select(columnsOf(0, negate).toArray(Column[]::new));
            }
            Dataset<Row> rows = attributes.addTo(events);
            List<Column> perSet = new ArrayList<>();
            for (int i = 0; i < scopes.size(); i++)
                perSet.add(struct(columnsOf(i, negate).toArray(Column[]::new)));
            Dataset<Row> exploded = rows.select(
                            explode(array(perSet.toArray(Column[]::new))).as(CONTRIBUTION))
                    .select(col(CONTRIBUTION + ".*"));
            return filtered ? exploded.filter(col(TAKEN)).drop(TAKEN) : exploded;
        }

        private List<Column> columnsOf(int i, boolean negate) {
            UnaryOperator<Column> sign = c -> negate ? negate(c) : c;
            LakeSetColumns set = sets.get(i);
            List<Column> out = new ArrayList<>();
            if (several()) out.add(lit(i).as(SET));
            if (filtered) {
                Column rows = scopes.get(i).rows();
                out.add((rows == null ? lit(true) : rows).as(TAKEN));
            }
            out.add(set.windowStart().as(WINDOW_START));
            int dims = set.set().dimensions().size();
            for (int d = 0; d < dimensions; d++) {
                Column value = d < dims ? set.dimension(d) : lit(null).cast(DataTypes.StringType);
                out.add(value.as(DIMENSION + d));
            }
            List<Measure> measures = set.set().measures();
            for (int j = 0; j < slotHasHigh.length; j++) {
                Measure m = j < measures.size() ? measures.get(j) : null;
                Column value = m == null ? lit(0L) : set.contribution(m);
                if (m == null || m.isCount()) {
                    out.add(sign.apply(value).as(MEASURE + j));
                    if (slotHasHigh[j]) out.add(lit(0L).as(MEASURE + j + HIGH_BITS));
                } else {
                    out.add(sign.apply(value.bitwiseAND(LOW_32_BITS)).as(MEASURE + j));
                    out.add(sign.apply(shiftright(value, 32)).as(MEASURE + j + HIGH_BITS));
                }
            }
            out.add(sign.apply(col(LAKE_ROWS)).as(LAKE_ROWS));
            out.add(sign.apply(set.leftOut()).as(LEFT_OUT));
            return out;
        }

        /**
         * Set {@code i}'s rows of the summed aggregation, in its own names and types: window_start, its dimensions,
         * its measures (BIGINT counts, DECIMAL(38,0) sums put together from their halves), {@link #LAKE_ROWS}, {@link
         * #LEFT_OUT}.
         */
        Dataset<Row> rowsOfSet(Dataset<Row> summed, int i) {
            MetricSet set = scopes.get(i).set();
            Dataset<Row> rows = several() ? summed.filter(col(SET).equalTo(i)) : summed;
            List<Column> out = new ArrayList<>();
            out.add(col(WINDOW_START));
            for (int d = 0; d < set.dimensions().size(); d++) {
                out.add(col(DIMENSION + d).as(set.dimensions().get(d).name()));
            }
            List<Measure> measures = set.measures();
            for (int j = 0; j < measures.size(); j++) {
                Measure m = measures.get(j);
                if (m.isCount()) {
                    out.add(col(MEASURE + j).as(m.name()));
                } else {
                    String type = m.sqlType();
                    out.add(expr("CAST(CAST(" + MEASURE + j + HIGH_BITS + " AS " + type + ") * " + (1L << 32)
                                    + " + CAST(" + MEASURE + j + " AS " + type + ") AS " + type + ")")
                            .as(m.name()));
                }
            }
            out.add(col(LAKE_ROWS));
            out.add(col(LEFT_OUT));
            return rows.select(out.toArray(Column[]::new));
        }
    }

    /**
     * The window rows of a recompute, per set, and the cached sets they read; {@link #close()} frees them. Each set's
     * rows are cached: the run counts them, then stages them.
     */
    public static final class Recomputed implements AutoCloseable {
        private final Map<MetricSet, Dataset<Row>> rows;
        private final List<Dataset<Row>> cached;
        private final long repeatedHashes;

        Recomputed(Map<MetricSet, Dataset<Row>> rows, List<Dataset<Row>> cached, long repeatedHashes) {
            this.rows = rows;
            this.cached = cached;
            this.repeatedHashes = repeatedHashes;
        }

        /**
         * Every window key of {@code set}: {@link #WINDOW_START}, the set's dimensions and measures by name,
         * {@link #LAKE_ROWS} and {@link #LEFT_OUT}; keys without events too (see {@link #stored}).
         */
        public Dataset<Row> rows(MetricSet set) {
            Dataset<Row> r = rows.get(set);
            if (r == null) throw new IllegalArgumentException("set " + set.name() + " was not recomputed");
            return r;
        }

        /** The keys of {@code set} that hold events: what its tables store (a key without any is no row). */
        public Dataset<Row> stored(MetricSet set) {
            return rows(set).filter(col(Measure.EVENTS).gt(0));
        }

        /** How many id hashes occur more than once (events with copies, and ids that collide). */
        public long repeatedHashes() {
            return repeatedHashes;
        }

        @Override
        public void close() {
            for (int i = cached.size() - 1; i >= 0; i--) cached.get(i).unpersist();
        }
    }

    /** Refuses a session that would wrap a BIGINT sum or turn an overflowing decimal sum into NULL. */
    static void requireAnsiMode(SparkSession spark) {
        if (!"true".equalsIgnoreCase(spark.conf().get(SparkSessions.ANSI_MODE, "false"))) {
            throw new IllegalStateException("the Spark session must run with " + SparkSessions.ANSI_MODE
                    + "=true: without it an overflowing sum is wrapped or NULL instead of an error");
        }
    }
}
