package dev.recount.batch;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads sizes as the config writes them: bytes, or a whole number with k, m or g (powers of 1024). */
final class DataSizes {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmg]?)b?");

    private DataSizes() {}

    static long parse(String setting, String text) {
        Matcher m = SIZE.matcher(text == null ? "" : text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "setting " + setting + ": cannot read size '" + text + "'; expected bytes or e.g. 512k, 256m, 1g");
        }
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        try {
            return Math.multiplyExact(Long.parseLong(m.group(1)), 1L << shift);
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("setting " + setting + ": size '" + text + "' is too large", e);
        }
    }

    /** A size for messages: whole MiB or KiB where exact, else bytes. */
    static String format(long bytes) {
        if (bytes >= 1L << 20 && bytes % (1L << 20) == 0) return (bytes >> 20) + "m";
        if (bytes >= 1L << 10 && bytes % (1L << 10) == 0) return (bytes >> 10) + "k";
        return Long.toString(bytes);
    }
}
