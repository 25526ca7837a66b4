package dev.recount.core.metrics;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Objects;

/**
 * The ratios served next to the sums (CONTRACT §4), each the ratio of two sums of one window, rollup or range,
 * never a sum or an average of ratios. The same rule as the SQL functions of migration V12 ({@code exact_ratio}
 * and one function per ratio, named {@link #column()}), which serve them; this is its Java twin, for the report.
 *
 * <p>The value is the exact quotient rounded half up to {@link #SCALE} decimal places; empty (SQL NULL) where the
 * denominator is 0. Money ratios are in micro-units, like spend; CPM is per 1000 impressions.
 */
public enum Ratio {
    /** Clicks per impression. */
    CTR(Metric.CLICKS, Metric.IMPRESSIONS, 1),
    /** Conversions per click. */
    CVR(Metric.CONVERSIONS, Metric.CLICKS, 1),
    /** Spend micros per click. */
    CPC_MICROS(Metric.SPEND_MICROS, Metric.CLICKS, 1),
    /** Spend micros per 1000 impressions. */
    CPM_MICROS(Metric.SPEND_MICROS, Metric.IMPRESSIONS, 1000),
    /** Spend micros per conversion. */
    COST_PER_CONVERSION_MICROS(Metric.SPEND_MICROS, Metric.CONVERSIONS, 1);

    /** Decimal places of every ratio (PostgreSQL: a numeric of scale 12). */
    public static final int SCALE = 12;

    private final Metric numerator;
    private final Metric denominator;
    private final BigInteger per;

    Ratio(Metric numerator, Metric denominator, long per) {
        this.numerator = numerator;
        this.denominator = denominator;
        this.per = BigInteger.valueOf(per);
    }

    /** The column (and SQL function) name. */
    public String column() {
        return name().toLowerCase(Locale.ROOT);
    }

    public Metric numerator() {
        return numerator;
    }

    public Metric denominator() {
        return denominator;
    }

    /** This ratio of {@code sums}, or null where its denominator is 0. */
    public BigDecimal of(WindowMetrics sums) {
        Objects.requireNonNull(sums, "sums");
        return of(sums.get(numerator).multiply(per), sums.get(denominator));
    }

    /** {@code numerator / denominator} rounded half up to {@link #SCALE} places; null if the denominator is 0. */
    public static BigDecimal of(BigInteger numerator, BigInteger denominator) {
        Objects.requireNonNull(numerator, "numerator");
        Objects.requireNonNull(denominator, "denominator");
        if (denominator.signum() == 0) return null;
        return new BigDecimal(numerator).divide(new BigDecimal(denominator), SCALE, RoundingMode.HALF_UP);
    }
}
