package dev.recount.core.sets;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The measure values of one window key of a set, exactly, in the set's measure order: what a row holds. Every value
 * is a non-negative {@link BigInteger}, so code that treats measures alike (tables, diffs, reports, JSON) is exact
 * without asking which kind it holds; {@link #count} gives a count as the long it is stored as.
 */
public final class MeasureValues implements Serializable {
    private static final long serialVersionUID = 1L;

    private final BigInteger[] values;

    public MeasureValues(BigInteger... values) {
        this.values = values.clone();
        for (int i = 0; i < this.values.length; i++) {
            Objects.requireNonNull(this.values[i], "value " + i);
        }
    }

    public MeasureValues(List<BigInteger> values) {
        this(values.toArray(BigInteger[]::new));
    }

    /** Values that all fit a long (tests, counts). */
    public static MeasureValues of(long... values) {
        return new MeasureValues(
                Arrays.stream(values).mapToObj(BigInteger::valueOf).toArray(BigInteger[]::new));
    }

    /** {@code n} zeros. */
    public static MeasureValues zeros(int n) {
        BigInteger[] v = new BigInteger[n];
        Arrays.fill(v, BigInteger.ZERO);
        return new MeasureValues(v);
    }

    public int size() {
        return values.length;
    }

    /** Measure {@code i}, exactly. */
    public BigInteger get(int i) {
        return values[i];
    }

    /** Measure {@code i} as a long: for counts, which are 64-bit columns; an error for a value beyond a long. */
    public long count(int i) {
        return values[i].longValueExact();
    }

    public List<BigInteger> asList() {
        return List.of(values);
    }

    /** Element-wise sum with {@code other} (same set). */
    public MeasureValues plus(MeasureValues other) {
        if (other.values.length != values.length) {
            throw new IllegalArgumentException("cannot add " + other.values.length + " values to " + values.length);
        }
        BigInteger[] sum = new BigInteger[values.length];
        for (int i = 0; i < sum.length; i++) sum[i] = values[i].add(other.values[i]);
        return new MeasureValues(sum);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MeasureValues m && Arrays.equals(m.values, values);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values);
    }

    @Override
    public String toString() {
        return Arrays.toString(values);
    }
}
