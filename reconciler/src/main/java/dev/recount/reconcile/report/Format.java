package dev.recount.reconcile.report;

import dev.recount.core.sets.Measure;
import java.math.BigInteger;
import java.util.Locale;

/** A measure's value for people: money in currency units with six decimals and grouping, anything else grouped. */
final class Format {
    private Format() {}

    static String value(Measure m, BigInteger v) {
        return Labels.isMoney(m) ? Money.grouped(v) : String.format(Locale.ROOT, "%,d", v);
    }

    /** As {@link #value}, with a sign when positive: a difference. */
    static String signed(Measure m, BigInteger v) {
        String s = value(m, v);
        return v.signum() > 0 ? "+" + s : s;
    }
}
