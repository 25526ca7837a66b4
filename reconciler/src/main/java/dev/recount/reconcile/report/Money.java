package dev.recount.reconcile.report;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * Spend is stored in micro-units (an exact integer that may exceed a long); people read currency units.
 * Conversions go through {@link BigDecimal} with scale 6, which is exact: no value is ever passed through a
 * long or a double.
 */
public final class Money {
    private Money() {}

    /** {@code 1234567 → "1.234567"}, {@code -5 → "-0.000005"}: six decimals, no grouping (for CSV and JSON). */
    public static String units(BigInteger micros) {
        if (micros.bitLength() < 63) return sixDecimals(micros.longValue());
        return new BigDecimal(micros, 6).toPlainString();
    }

    public static String units(long micros) {
        return micros == Long.MIN_VALUE
                ? new BigDecimal(BigInteger.valueOf(micros), 6).toPlainString()
                : sixDecimals(micros);
    }

    /**
     * {@code unscaled} / 10^6 as {@code new BigDecimal(unscaled, 6).toPlainString()} writes it, without building one:
     * diffs.csv writes several such numbers for every differing key.
     */
    private static String sixDecimals(long unscaled) {
        long abs = Math.abs(unscaled);
        String fraction = Long.toString(abs % 1_000_000);
        StringBuilder sb = new StringBuilder(28);
        if (unscaled < 0) sb.append('-');
        sb.append(abs / 1_000_000).append('.');
        for (int i = fraction.length(); i < 6; i++) sb.append('0');
        return sb.append(fraction).toString();
    }

    /** As {@link #units} with thousands separators, for people: {@code 1234567890123 → "1,234,567.890123"}. */
    public static String grouped(BigInteger micros) {
        String plain = units(micros);
        boolean negative = plain.startsWith("-");
        String digits = negative ? plain.substring(1) : plain;
        int dot = digits.indexOf('.');
        String whole = digits.substring(0, dot);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < whole.length(); i++) {
            if (i > 0 && (whole.length() - i) % 3 == 0) sb.append(',');
            sb.append(whole.charAt(i));
        }
        return (negative ? "-" : "") + sb + digits.substring(dot);
    }

    public static String grouped(long micros) {
        return grouped(BigInteger.valueOf(micros));
    }

    /** Axis labels: as few decimals as the value needs ({@code 2500000 → "2.5"}). */
    public static String compact(BigInteger micros) {
        BigDecimal v = new BigDecimal(micros, 6).stripTrailingZeros();
        return v.scale() < 0 ? v.setScale(0, RoundingMode.UNNECESSARY).toPlainString() : v.toPlainString();
    }

    /**
     * (stream − batch) / batch as a percentage with four decimals ("+0.1250 %"), exact up to that rounding;
     * "0 %" when both are 0 and "n/a" when only batch is 0 (no base to relate to).
     */
    public static String relativePercent(BigInteger stream, BigInteger batch) {
        BigDecimal diff = new BigDecimal(stream.subtract(batch));
        if (batch.signum() == 0) return diff.signum() == 0 ? "0 %" : "n/a";
        BigDecimal pct =
                diff.multiply(BigDecimal.valueOf(100)).divide(new BigDecimal(batch.abs()), 4, RoundingMode.HALF_EVEN);
        return (pct.signum() > 0 ? "+" : "") + pct.toPlainString() + " %";
    }

    public static String relativePercent(long stream, long batch) {
        return relativePercent(BigInteger.valueOf(stream), BigInteger.valueOf(batch));
    }

    /** (stream − batch) / |batch| as a plain decimal with six places for CSV ("" when batch is 0 and stream is not). */
    public static String relative(BigInteger stream, BigInteger batch) {
        BigDecimal diff = new BigDecimal(stream.subtract(batch));
        if (batch.signum() == 0) return diff.signum() == 0 ? "0" : "";
        return diff.divide(new BigDecimal(batch.abs()), 6, RoundingMode.HALF_EVEN)
                .toPlainString();
    }

    public static String relative(long stream, long batch) {
        long diff = stream - batch;
        // The same digits in long arithmetic when nothing can overflow (every count and nearly every spend):
        // the difference, it times 10^6, and twice the remainder.
        if (((stream ^ batch) & (stream ^ diff)) < 0
                || batch == Long.MIN_VALUE
                || Math.abs(batch) > Long.MAX_VALUE / 2
                || diff > Long.MAX_VALUE / 1_000_000
                || diff < -(Long.MAX_VALUE / 1_000_000)) {
            return relative(BigInteger.valueOf(stream), BigInteger.valueOf(batch));
        }
        if (batch == 0) return diff == 0 ? "0" : "";
        long base = Math.abs(batch), scaled = diff * 1_000_000;
        long quotient = scaled / base, twiceRemainder = 2 * Math.abs(scaled % base);
        if (twiceRemainder > base || (twiceRemainder == base && (quotient & 1) != 0)) {
            quotient += Long.signum(scaled); // HALF_EVEN: over half away from zero, exactly half to even
        }
        return sixDecimals(quotient);
    }
}
