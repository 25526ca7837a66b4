package dev.recount.reconcile.report;

/**
 * Makes text from the data (campaign and channel ids are user input) safe to open in a spreadsheet, in two steps,
 * in this order:
 * <ol>
 *   <li>Every Unicode bidirectional control character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) is
 *       replaced by its visible name, e.g. {@code <U+202E>}: invisible, they can make a cell read differently
 *       from what it holds (a right-to-left override shows {@code "gpj.exe"} as {@code "exe.jpg"}). Replaced,
 *       not removed, so two ids that differ only in such a mark stay two different cells.</li>
 *   <li>A cell that then starts with {@code = + - @}, tab or carriage return gets a leading apostrophe, so a
 *       spreadsheet shows it as text instead of running it as a formula. Step 1 comes first so that a mark in
 *       front ({@code "\u202E=cmd"}) cannot hide a formula from this check.</li>
 * </ol>
 * Numbers we format ourselves never pass through here: a negative difference stays a number.
 */
public final class SpreadsheetText {
    private SpreadsheetText() {}

    /** {@code value} neutralised as above; null becomes empty. */
    public static String neutralise(String value) {
        if (value == null || value.isEmpty()) return "";
        String visible = showBidiControls(value);
        char first = visible.charAt(0);
        if (first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' || first == '\r') {
            return "'" + visible;
        }
        return visible;
    }

    /** Whether {@code c} is one of the Unicode bidirectional formatting characters (UAX #9, "explicit formatting"). */
    static boolean isBidiControl(char c) {
        return c == '\u061C'
                || c == '\u200E'
                || c == '\u200F'
                || (c >= '\u202A' && c <= '\u202E')
                || (c >= '\u2066' && c <= '\u2069');
    }

    /** Every bidi control character in {@code value} replaced by its visible name ({@code <U+202E>}). */
    static String showBidiControls(String value) {
        StringBuilder sb = null;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (isBidiControl(c)) {
                if (sb == null) sb = new StringBuilder(value.length() + 16).append(value, 0, i);
                sb.append(String.format(java.util.Locale.ROOT, "<U+%04X>", (int) c));
            } else if (sb != null) {
                sb.append(c);
            }
        }
        return sb == null ? value : sb.toString();
    }
}
