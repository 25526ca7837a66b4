package dev.recount.core.attribution;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Objects;

/**
 * The attribution metrics of one window key (window of the click or conversion, its campaign and channel):
 *
 * <ul>
 *   <li>{@code attributedClicks}: clicks an impression attributes ({@link AttributionRule});</li>
 *   <li>{@code attributedConversions}: conversions an impression attributes;</li>
 *   <li>{@code unattributedClicks}: the other clicks (no request id, no impression in the window, or only later
 *       ones); unattributed conversions are not counted;</li>
 *   <li>{@code attributedSpendMicros}: the {@code cost_micros} of the attributed clicks and conversions themselves
 *       (CPC and CPA charges backed by an impression). Not the impression's cost: an impression clicked twice
 *       would then be counted twice. Exact, like window spend.</li>
 * </ul>
 */
public record AttributionMetrics(
        long attributedClicks, long attributedConversions, long unattributedClicks, BigInteger attributedSpendMicros)
        implements Serializable {
    public static final AttributionMetrics ZERO = new AttributionMetrics(0, 0, 0, BigInteger.ZERO);

    /** Column names, in this order, in every table and report. */
    public static final String[] COLUMNS = {
        "attributed_clicks", "attributed_conversions", "unattributed_clicks", "attributed_spend_micros"
    };

    public AttributionMetrics {
        Objects.requireNonNull(attributedSpendMicros, "attributedSpendMicros");
    }

    public AttributionMetrics(
            long attributedClicks, long attributedConversions, long unattributedClicks, long attributedSpendMicros) {
        this(attributedClicks, attributedConversions, unattributedClicks, BigInteger.valueOf(attributedSpendMicros));
    }

    public AttributionMetrics plus(AttributionMetrics o) {
        return new AttributionMetrics(
                Math.addExact(attributedClicks, o.attributedClicks),
                Math.addExact(attributedConversions, o.attributedConversions),
                Math.addExact(unattributedClicks, o.unattributedClicks),
                attributedSpendMicros.add(o.attributedSpendMicros));
    }

    /** The value of column {@code i} of {@link #COLUMNS}, exactly. */
    public BigInteger get(int i) {
        return switch (i) {
            case 0 -> BigInteger.valueOf(attributedClicks);
            case 1 -> BigInteger.valueOf(attributedConversions);
            case 2 -> BigInteger.valueOf(unattributedClicks);
            case 3 -> attributedSpendMicros;
            default -> throw new IllegalArgumentException("no attribution column " + i);
        };
    }
}
