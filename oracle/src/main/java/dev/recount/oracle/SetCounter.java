package dev.recount.oracle;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One set's rows from events counted once each: per window (aligned to the epoch, the set's size) and dimension
 * values, every measure exactly (BigInteger: no sum wraps or rounds).
 */
public final class SetCounter {
    private final Definitions.MetricSet set;
    private final Map<Key, BigInteger[]> rows = new HashMap<>();

    public SetCounter(Definitions.MetricSet set) {
        this.set = set;
    }

    public Definitions.MetricSet set() {
        return set;
    }

    /** The row {@code e} counts in: the set's window of its event time, its dimension values. */
    public Key keyOf(Event e) {
        long start = Math.floorDiv(e.eventTs(), set.windowMillis()) * set.windowMillis();
        return new Key(
                start,
                set.dimensions().stream()
                        .map(d -> Objects.requireNonNullElse(e.text(d), ""))
                        .toList());
    }

    public void add(Event e) {
        BigInteger[] sums =
                rows.computeIfAbsent(keyOf(e), k -> zeros(set.measures().size()));
        for (int i = 0; i < sums.length; i++)
            sums[i] = sums[i].add(contribution(set.measures().get(i), e));
    }

    /** What one event adds to a measure: nothing when a condition refuses it, else 1 or the summed field's value. */
    static BigInteger contribution(Definitions.Measure m, Event e) {
        for (Map.Entry<String, java.util.Set<String>> condition : m.where().entrySet()) {
            String value = e.text(condition.getKey());
            if (value == null || !condition.getValue().contains(value)) return BigInteger.ZERO;
        }
        return m.isSum() ? BigInteger.valueOf(e.number(m.sumOf())) : BigInteger.ONE;
    }

    /** Every row, by key; a key exists only where an event was counted (its {@code events} is at least 1). */
    public SortedMap<Key, List<BigInteger>> rows() {
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        rows.forEach((k, v) -> out.put(k, List.of(v)));
        return out;
    }

    static BigInteger[] zeros(int n) {
        BigInteger[] z = new BigInteger[n];
        Arrays.fill(z, BigInteger.ZERO);
        return z;
    }
}
