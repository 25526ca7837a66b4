package dev.recount.core.sets;

import java.io.Serializable;
import java.util.Arrays;

/**
 * Running sums of one window key of a set, one slot per measure in the set's order. Mutable on purpose: the stream
 * adds every event to one of these per key and window, and allocating per event would dominate the cost. The maths is
 * the set's ({@link MetricSet#add}, {@link MetricSet#merge}); this is only the data, so that state serializers
 * write two arrays.
 *
 * <p>A count slot holds its count (overflow is an error: {@code Math.addExact}). A sum must be exact whatever it sums
 * to (one value may be up to 2^63 - 1): its slot holds the low 64 bits, read as unsigned, and {@link #carries} the
 * high word, a 128-bit integer in two longs with plain long arithmetic per event. With at most 2^63 values, each
 * below 2^63, the carry cannot overflow.
 */
public final class MeasureSums implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Per measure: its count, or the low 64 bits of its sum. Public for state serializers. */
    public long[] sums;
    /** Per measure: the high word of its sum (0 for counts); null when the set sums nothing. */
    public long[] carries;

    public MeasureSums(long[] sums, long[] carries) {
        this.sums = sums;
        this.carries = carries;
    }

    /** An empty copy-free accumulator for {@code measures} slots, with carries when {@code sums} are among them. */
    public static MeasureSums empty(int measures, boolean withCarries) {
        return new MeasureSums(new long[measures], withCarries ? new long[measures] : null);
    }

    /** A copy whose arrays this one's changes do not reach. */
    public MeasureSums copy() {
        return new MeasureSums(sums.clone(), carries == null ? null : carries.clone());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MeasureSums m && Arrays.equals(m.sums, sums) && Arrays.equals(m.carries, carries);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(sums);
    }

    @Override
    public String toString() {
        return "MeasureSums" + Arrays.toString(sums) + (carries == null ? "" : " carries " + Arrays.toString(carries));
    }
}
