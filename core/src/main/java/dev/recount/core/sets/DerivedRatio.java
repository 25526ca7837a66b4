package dev.recount.core.sets;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * A ratio served next to a set's sums (CONTRACT §4): {@code numerator * per / denominator} of two of its measures, of
 * one window, rollup or range — never a sum or an average of ratios. The exact quotient rounded half up to
 * {@link #SCALE} places, SQL NULL where the denominator is 0; the SQL function {@code exact_ratio} of migration V12 is
 * the same rule, and {@code RatioTest} keeps the two equal.
 */
public record DerivedRatio(String name, String numerator, String denominator, long per) implements Serializable {
    /** Decimal places of every ratio (PostgreSQL: a numeric of scale 12). */
    public static final int SCALE = 12;

    public DerivedRatio {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(numerator, "numerator");
        Objects.requireNonNull(denominator, "denominator");
        if (per < 1) throw new IllegalArgumentException("ratio " + name + ": per must be >= 1, got " + per);
    }

    /** This ratio of two measure values, or null where the denominator is 0. */
    public BigDecimal of(BigInteger numeratorValue, BigInteger denominatorValue) {
        return exact(numeratorValue.multiply(BigInteger.valueOf(per)), denominatorValue);
    }

    /** {@code numerator / denominator} rounded half up to {@link #SCALE} places; null if the denominator is 0. */
    public static BigDecimal exact(BigInteger numerator, BigInteger denominator) {
        Objects.requireNonNull(numerator, "numerator");
        Objects.requireNonNull(denominator, "denominator");
        if (denominator.signum() == 0) return null;
        return new BigDecimal(numerator).divide(new BigDecimal(denominator), SCALE, RoundingMode.HALF_UP);
    }
}
