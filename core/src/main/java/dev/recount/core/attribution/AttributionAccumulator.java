package dev.recount.core.attribution;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.io.Serializable;
import java.math.BigInteger;

/**
 * Running attribution sums of one window key, changed by one decision at a time: {@link #decided} when a click or
 * conversion is first judged, {@link #attributedLater} when an impression that arrived after it attributes it
 * after all (the only change a decision can undergo: impressions are only ever added). The counts of a delta may
 * be negative (a click moving from unattributed to attributed); spend only grows.
 *
 * <p>Mutable and with public fields: a Flink POJO. Spend is exact like window spend, {@code spendCarry * 2^64 +
 * unsigned(spendLow)}.
 */
public final class AttributionAccumulator implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final BigInteger TWO_TO_THE_64 = BigInteger.ONE.shiftLeft(64);

    public long attributedClicks;
    public long attributedConversions;
    public long unattributedClicks;
    public long spendLow;
    public long spendCarry;

    /** A click or conversion judged for the first time. */
    public AttributionAccumulator decided(AdEvent e, boolean attributed) {
        requireAttributable(e);
        if (attributed) {
            addAttributed(e);
        } else if (e.eventType == EventType.CLICK) {
            unattributedClicks = Math.addExact(unattributedClicks, 1L);
        }
        return this;
    }

    /** A click or conversion judged unattributed before, attributed now. */
    public AttributionAccumulator attributedLater(AdEvent e) {
        requireAttributable(e);
        if (e.eventType == EventType.CLICK) unattributedClicks = Math.subtractExact(unattributedClicks, 1L);
        addAttributed(e);
        return this;
    }

    public AttributionAccumulator merge(AttributionAccumulator o) {
        attributedClicks = Math.addExact(attributedClicks, o.attributedClicks);
        attributedConversions = Math.addExact(attributedConversions, o.attributedConversions);
        unattributedClicks = Math.addExact(unattributedClicks, o.unattributedClicks);
        long sum = spendLow + o.spendLow;
        long carry = Math.addExact(spendCarry, o.spendCarry);
        if (Long.compareUnsigned(sum, spendLow) < 0) carry = Math.addExact(carry, 1L);
        spendLow = sum;
        spendCarry = carry;
        return this;
    }

    public boolean isZero() {
        return attributedClicks == 0
                && attributedConversions == 0
                && unattributedClicks == 0
                && spendLow == 0
                && spendCarry == 0;
    }

    public AttributionMetrics toMetrics() {
        BigInteger low = spendLow >= 0
                ? BigInteger.valueOf(spendLow)
                : BigInteger.valueOf(spendLow).add(TWO_TO_THE_64);
        BigInteger spend = spendCarry == 0
                ? low
                : BigInteger.valueOf(spendCarry).shiftLeft(64).add(low);
        return new AttributionMetrics(attributedClicks, attributedConversions, unattributedClicks, spend);
    }

    private void addAttributed(AdEvent e) {
        if (e.costMicros < 0) {
            throw new IllegalArgumentException(
                    "cost_micros must be >= 0, got " + e.costMicros + " for event " + e.eventId);
        }
        if (e.eventType == EventType.CLICK) {
            attributedClicks = Math.addExact(attributedClicks, 1L);
        } else {
            attributedConversions = Math.addExact(attributedConversions, 1L);
        }
        long sum = spendLow + e.costMicros;
        if (Long.compareUnsigned(sum, spendLow) < 0) spendCarry = Math.addExact(spendCarry, 1L);
        spendLow = sum;
    }

    private static void requireAttributable(AdEvent e) {
        if (!AttributionRule.isAttributable(e)) {
            throw new IllegalArgumentException(
                    "only clicks and conversions are attributed, got " + e.eventType + " event " + e.eventId);
        }
    }
}
