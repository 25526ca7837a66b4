package dev.recount.core.sets;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.event.AdEvent;
import dev.recount.core.window.WindowAlignment;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One metric set (CONTRACT §2, "Metric sets"): per tumbling window of {@link #window()} and per value of its
 * dimensions, its additive {@link Measure}s, with {@link DerivedRatio}s, rollups, attribution and a reconciliation
 * tolerance. Every layer is built from this definition: the stream's windows and state, Spark's aggregation, the
 * tables, views and functions migrate creates, the reconciler's SQL and the report. Fully resolved: settings the file
 * leaves to the configuration (window size, attribution, the default set's tolerances) are filled in by
 * {@link MetricSets#resolve}.
 *
 * <p>The {@link #DEFAULT} set is today's metrics (campaign x channel; impressions, clicks, conversions, spend, events)
 * and keeps today's tables; every other set's objects are named {@code <set>__<object>}.
 *
 * <p>Every set has the measure {@link Measure#EVENTS}, the count of all its key's events, last unless declared: the
 * stream's upsert guard and the batch layer's empty-key filter read it.
 */
public final class MetricSet implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The set whose objects keep today's names (stream_window_metrics, window_metrics, ...). */
    public static final String DEFAULT = "default";

    private final String name;
    private final List<EventField> dimensions;
    private final List<Measure> measures;
    private final List<DerivedRatio> ratios;
    private final Duration window;
    private final Set<Rollup> rollups;
    private final boolean attribution;
    private final Map<String, Tolerance> tolerances;
    private final int line;

    private final EventField[] dimensionArray;
    private final Measure[] measureArray;
    private final boolean[] isCount;
    private final boolean hasSums;
    private final int eventsIndex;

    public MetricSet(
            String name,
            List<EventField> dimensions,
            List<Measure> measures,
            List<DerivedRatio> ratios,
            Duration window,
            Set<Rollup> rollups,
            boolean attribution,
            Map<String, Tolerance> tolerances,
            int line) {
        this.name = Objects.requireNonNull(name, "name");
        this.dimensions = List.copyOf(dimensions);
        this.ratios = List.copyOf(ratios);
        this.window = Objects.requireNonNull(window, "window");
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("set " + name + ": window must be positive, got " + window);
        }
        this.rollups =
                Collections.unmodifiableSet(rollups.isEmpty() ? EnumSet.noneOf(Rollup.class) : EnumSet.copyOf(rollups));
        this.attribution = attribution;
        this.line = line;
        if (this.dimensions.isEmpty()) throw new IllegalArgumentException("set " + name + " has no dimension");
        List<Measure> all = new ArrayList<>(measures);
        int events = -1;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).name().equals(Measure.EVENTS)) events = i;
        }
        if (events < 0) {
            all.add(Measure.count(Measure.EVENTS, List.of()));
            events = all.size() - 1;
        } else if (!all.get(events).sameDefinition(Measure.count(Measure.EVENTS, List.of()))) {
            throw new IllegalArgumentException("set " + name + ": " + Measure.EVENTS
                    + " is the count of every event of a key; it cannot be declared otherwise");
        }
        this.measures = List.copyOf(all);
        this.eventsIndex = events;
        Map<String, Tolerance> t = new LinkedHashMap<>();
        for (Measure m : this.measures) t.put(m.name(), tolerances.getOrDefault(m.name(), Tolerance.EXACT));
        this.tolerances = Collections.unmodifiableMap(t);
        this.dimensionArray = this.dimensions.toArray(EventField[]::new);
        this.measureArray = this.measures.toArray(Measure[]::new);
        this.isCount = new boolean[measureArray.length];
        boolean sums = false;
        for (int i = 0; i < measureArray.length; i++) {
            isCount[i] = measureArray[i].isCount();
            sums |= !isCount[i];
        }
        this.hasSums = sums;
    }

    public String name() {
        return name;
    }

    /** True for {@link #DEFAULT}, whose objects keep today's names. */
    public boolean isDefault() {
        return DEFAULT.equals(name);
    }

    public List<EventField> dimensions() {
        return dimensions;
    }

    public List<String> dimensionNames() {
        return dimensions.stream().map(EventField::name).toList();
    }

    /** Every measure in column order, {@link Measure#EVENTS} included. */
    public List<Measure> measures() {
        return measures;
    }

    public List<String> measureNames() {
        return measures.stream().map(Measure::name).toList();
    }

    /** The position of the measure named {@code measure}; -1 if the set has none. */
    public int measureIndex(String measure) {
        for (int i = 0; i < measureArray.length; i++) {
            if (measureArray[i].name().equals(measure)) return i;
        }
        return -1;
    }

    /** The position of {@link Measure#EVENTS}. */
    public int eventsIndex() {
        return eventsIndex;
    }

    public List<DerivedRatio> ratios() {
        return ratios;
    }

    public Duration window() {
        return window;
    }

    public WindowAlignment windows() {
        return new WindowAlignment(window.toMillis());
    }

    public Set<Rollup> rollups() {
        return rollups;
    }

    /** Whether the stream and batch layers compute impression–click attribution per key of this set. */
    public boolean attribution() {
        return attribution;
    }

    /** Per measure name, its tolerance. */
    public Map<String, Tolerance> tolerances() {
        return tolerances;
    }

    public Tolerance tolerance(String measure) {
        Tolerance t = tolerances.get(measure);
        if (t == null) throw new IllegalArgumentException("set " + name + " has no measure " + measure);
        return t;
    }

    /** Where the definitions file declares it (0: built in). */
    public int line() {
        return line;
    }

    /** Whether any measure is a sum (whose accumulator needs carries). */
    public boolean hasSums() {
        return hasSums;
    }

    // ---- per event ------------------------------------------------------------------------------------------------

    /** The event's dimension values, in the set's order. */
    public String[] dimensionValues(AdEvent e) {
        String[] values = new String[dimensionArray.length];
        for (int i = 0; i < values.length; i++) values[i] = dimensionArray[i].text(e);
        return values;
    }

    /** The event's value of dimension {@code i}. */
    public String dimensionValue(AdEvent e, int i) {
        return dimensionArray[i].text(e);
    }

    /** An accumulator with nothing added. */
    public MeasureSums newSums() {
        return MeasureSums.empty(measureArray.length, hasSums);
    }

    /** Adds one event to {@code sums}; no allocation. */
    public MeasureSums add(MeasureSums sums, AdEvent e) {
        long[] s = sums.sums;
        for (int i = 0; i < measureArray.length; i++) {
            long c = measureArray[i].contribution(e);
            if (c == 0) continue;
            if (isCount[i]) {
                s[i] = Math.addExact(s[i], c);
            } else {
                if (c < 0) {
                    // Validation refuses negative values; one here would break the unsigned arithmetic.
                    throw new IllegalArgumentException(
                            measureArray[i].name() + ": negative value " + c + " in event " + e.eventId);
                }
                long low = s[i];
                long sum = low + c;
                if (Long.compareUnsigned(sum, low) < 0) sums.carries[i] = Math.addExact(sums.carries[i], 1L);
                s[i] = sum;
            }
        }
        return sums;
    }

    /** Adds {@code other}'s sums to {@code into}'s. */
    public MeasureSums merge(MeasureSums into, MeasureSums other) {
        for (int i = 0; i < measureArray.length; i++) {
            if (isCount[i]) {
                into.sums[i] = Math.addExact(into.sums[i], other.sums[i]);
            } else {
                long low = into.sums[i];
                long sum = low + other.sums[i];
                long carry = Math.addExact(into.carries[i], other.carries[i]);
                // Two unsigned 64-bit words wrap at most once, and then the sum is below either of them.
                if (Long.compareUnsigned(sum, low) < 0) carry = Math.addExact(carry, 1L);
                into.sums[i] = sum;
                into.carries[i] = carry;
            }
        }
        return into;
    }

    private static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

    /** The exact values of {@code sums}. */
    public MeasureValues values(MeasureSums sums) {
        BigInteger[] v = new BigInteger[measureArray.length];
        for (int i = 0; i < v.length; i++) {
            long low = sums.sums[i];
            long carry = isCount[i] ? 0 : sums.carries[i];
            if (carry == 0 && low >= 0) {
                v[i] = BigInteger.valueOf(low);
            } else {
                BigInteger unsignedLow = low >= 0
                        ? BigInteger.valueOf(low)
                        : BigInteger.valueOf(low).add(TWO_TO_THE_64);
                v[i] = BigInteger.valueOf(carry).shiftLeft(64).add(unsignedLow);
            }
        }
        return new MeasureValues(v);
    }

    /** An accumulator holding {@code values}, e.g. to add events to totals known from elsewhere. */
    public MeasureSums sumsOf(MeasureValues values) {
        requireSize(values);
        MeasureSums s = newSums();
        for (int i = 0; i < measureArray.length; i++) {
            BigInteger v = values.get(i);
            if (isCount[i]) {
                s.sums[i] = v.longValueExact();
            } else {
                if (v.signum() < 0 || v.bitLength() > 127) {
                    throw new IllegalArgumentException(measureArray[i].name() + " must be in [0, 2^127), got " + v);
                }
                s.sums[i] = v.longValue(); // the low 64 bits
                s.carries[i] = v.shiftRight(64).longValueExact();
            }
        }
        return s;
    }

    /** The values of an event alone (tests, one-event partials). */
    public MeasureValues valuesOf(AdEvent e) {
        return values(add(newSums(), e));
    }

    /** The value of {@code ratio} over {@code values}; null where its denominator is 0. */
    public BigDecimal ratio(DerivedRatio ratio, MeasureValues values) {
        requireSize(values);
        return ratio.of(values.get(measureIndex(ratio.numerator())), values.get(measureIndex(ratio.denominator())));
    }

    private void requireSize(MeasureValues values) {
        if (values.size() != measureArray.length) {
            throw new IllegalArgumentException(
                    "set " + name + " has " + measureArray.length + " measures, got " + values.size() + " values");
        }
    }

    // ---- identity -------------------------------------------------------------------------------------------------

    /**
     * What may not change in place, as canonical JSON: the dimensions and the measures (names, kinds, fields,
     * filters). A stored row means these; changing them would make old and new rows disagree silently. Ratios,
     * rollups, tolerance, attribution and the window may change (a row carries its own window end).
     */
    public String fingerprint() {
        ObjectMapper json = new ObjectMapper();
        ObjectNode n = json.createObjectNode();
        ArrayNode dims = n.putArray("dimensions");
        for (EventField d : dimensions) dims.add(d.name());
        ArrayNode ms = n.putArray("measures");
        for (Measure m : measures) {
            ObjectNode o = ms.addObject();
            o.put("name", m.name());
            o.put("kind", m.kind().word());
            if (m.field() != null) o.put("field", m.field().name());
            ObjectNode where = o.putObject("where");
            for (Filter f : m.filters()) {
                ArrayNode values = where.putArray(f.field().name());
                f.values().stream().sorted().forEach(values::add);
            }
        }
        return n.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MetricSet s
                && s.name.equals(name)
                && s.dimensions.equals(dimensions)
                && s.measures.equals(measures)
                && s.ratios.equals(ratios)
                && s.window.equals(window)
                && s.rollups.equals(rollups)
                && s.attribution == attribution
                && s.tolerances.equals(tolerances);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return "MetricSet{" + name + " by " + dimensionNames() + ": " + measureNames() + " per " + window + '}';
    }
}
