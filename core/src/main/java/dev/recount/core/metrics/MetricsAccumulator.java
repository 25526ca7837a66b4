package dev.recount.core.metrics;

import dev.recount.core.event.AdEvent;
import java.io.Serializable;
import java.math.BigInteger;

/**
 * Running sums for one window key. Mutable on purpose: Flink's AggregateFunction adds to one accumulator per
 * key and window, and allocating per event would dominate the cost.
 *
 * <p>Counts are longs; {@code Math.addExact} turns an overflow (2^63 events in one window, which cannot happen)
 * into an error instead of a wrong number. Spend must be exact whatever it sums to, since one event may cost up
 * to {@code Long.MAX_VALUE} micros: it is kept as a 128-bit integer in two longs, {@code spendCarry * 2^64 +
 * unsigned(sums[SPEND_MICROS])}, with plain long arithmetic per event (no allocation); the {@link BigInteger}
 * is built only by {@link #toMetrics()}. With at most 2^63 events (each below 2^63) the carry cannot overflow.
 *
 * <p>Flink keeps this class in window state with its POJO serializer, whose schema evolution can add public
 * fields but not change a field's type. So {@code sums} stays a {@code long[]} with the same layout and the
 * carry is an added field: a checkpoint taken before it existed restores with {@code spendCarry = 0}, and its
 * spend slot, which {@code Math.addExact} then kept in {@code [0, 2^63)}, reads the same as an unsigned low word.
 */
public final class MetricsAccumulator implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final Metric[] METRICS = Metric.values();
    private static final int SPEND = Metric.SPEND_MICROS.ordinal();
    private static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

    /**
     * Indexed by {@link Metric#ordinal()}. Public for Flink's POJO serializer. The spend slot holds the low 64
     * bits of the spend sum, read as an unsigned number.
     */
    public long[] sums = new long[METRICS.length];
    /** How many times the spend slot wrapped past 2^64 (the high word of spend). Public for Flink's POJO serializer. */
    public long spendCarry;

    /** An accumulator holding {@code totals}, e.g. to add events to totals known from elsewhere. */
    public static MetricsAccumulator of(WindowMetrics totals) {
        BigInteger spend = totals.spendMicros();
        if (spend.signum() < 0 || spend.bitLength() > 127) {
            throw new IllegalArgumentException("spendMicros must be in [0, 2^127), got " + spend);
        }
        MetricsAccumulator acc = new MetricsAccumulator();
        for (Metric m : METRICS) {
            if (m.isCount()) acc.sums[m.ordinal()] = totals.count(m);
        }
        acc.sums[SPEND] = spend.longValue(); // the low 64 bits
        acc.spendCarry = spend.shiftRight(64).longValueExact();
        return acc;
    }

    public MetricsAccumulator add(AdEvent e) {
        for (Metric m : METRICS) {
            if (m.ordinal() == SPEND) {
                addSpend(e);
            } else {
                sums[m.ordinal()] = Math.addExact(sums[m.ordinal()], m.contribution(e));
            }
        }
        return this;
    }

    public MetricsAccumulator merge(MetricsAccumulator other) {
        for (int i = 0; i < sums.length; i++) {
            if (i != SPEND) sums[i] = Math.addExact(sums[i], other.sums[i]);
        }
        long low = sums[SPEND];
        long sum = low + other.sums[SPEND];
        long carry = Math.addExact(spendCarry, other.spendCarry);
        // Two unsigned 64-bit words wrap at most once, and then the sum is below either of them.
        if (Long.compareUnsigned(sum, low) < 0) carry = Math.addExact(carry, 1L);
        sums[SPEND] = sum;
        spendCarry = carry;
        return this;
    }

    public WindowMetrics toMetrics() {
        return new WindowMetrics(
                sums[Metric.IMPRESSIONS.ordinal()],
                sums[Metric.CLICKS.ordinal()],
                sums[Metric.CONVERSIONS.ordinal()],
                spend(),
                sums[Metric.EVENTS.ordinal()]);
    }

    private void addSpend(AdEvent e) {
        long cost = Metric.SPEND_MICROS.contribution(e);
        if (cost < 0) {
            // The validator dead-letters negative costs; a negative one here would break the unsigned arithmetic.
            throw new IllegalArgumentException("cost_micros must be >= 0, got " + cost + " for event " + e.eventId);
        }
        long low = sums[SPEND];
        long sum = low + cost;
        if (Long.compareUnsigned(sum, low) < 0) spendCarry = Math.addExact(spendCarry, 1L);
        sums[SPEND] = sum;
    }

    private BigInteger spend() {
        long low = sums[SPEND];
        if (spendCarry == 0 && low >= 0) return BigInteger.valueOf(low);
        BigInteger unsignedLow =
                low >= 0 ? BigInteger.valueOf(low) : BigInteger.valueOf(low).add(TWO_TO_THE_64);
        return BigInteger.valueOf(spendCarry).shiftLeft(64).add(unsignedLow);
    }
}
