package dev.recount.core.event;

/**
 * The rule every id is held to (the contract's ids, declared string attributes, the values a definitions file filters
 * on), and how an offending value is quoted in a detail. Its own home so that the validator and the metric-set
 * definitions, which both apply it, do not lean on each other.
 */
public final class IdRule {
    /** Longest id accepted, in UTF-8 bytes. */
    public static final int MAX_ID_BYTES = 256;
    /** Longest piece of an offending value quoted in a detail, in characters. */
    static final int QUOTE_CHARS = 80;

    private IdRule() {}

    /**
     * The id rule for a present string (no control character, no unpaired surrogate, not blank, at most
     * {@link #MAX_ID_BYTES} UTF-8 bytes); null when it holds, else the problem, naming {@code field}. Declared string
     * attributes and the values a definitions file filters on are held to it too.
     */
    public static String problem(String field, String id) {
        int utf8Bytes = 0;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c >= 0x20 && c < 0x7F) { // printable ASCII: nearly every character of nearly every id
                utf8Bytes++;
            } else if (Character.isISOControl(c)) {
                return field + " has control character " + codePoint(c) + " at index " + i + " in " + quote(id);
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < id.length()
                    && Character.isLowSurrogate(id.charAt(i + 1))) {
                utf8Bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                return field + " has unpaired surrogate " + codePoint(c) + " at index " + i + " in " + quote(id);
            } else {
                utf8Bytes += c < 0x800 ? 2 : 3;
            }
        }
        if (id.isBlank()) return field + " is empty";
        if (utf8Bytes > MAX_ID_BYTES)
            return field + " is " + utf8Bytes + " bytes long; at most " + MAX_ID_BYTES + " are accepted";
        return null;
    }

    private static String codePoint(char c) {
        return String.format("U+%04X", (int) c);
    }

    private static String quote(String s) {
        return "'" + printable(s, QUOTE_CHARS) + "'";
    }

    /**
     * {@code s} for a detail: whole when it fits {@code max} characters, else its start and "..."; control characters
     * and unpaired surrogates spelled <code>&#92;uXXXX</code>. The detail travels as JSON to the dead-letter topic,
     * where a raw lone surrogate would arrive as '?'. Never cuts a pair or an escape in half, and reads at most
     * {@code max} characters of a huge value.
     */
    public static String printable(String s, int max) {
        StringBuilder out = new StringBuilder(Math.min(s.length(), max) + 8);
        int cut = 0; // the longest whole-character prefix that leaves room for "..."
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                out.append(c).append(s.charAt(++i));
            } else if (Character.isISOControl(c) || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
            if (out.length() > max) return out.substring(0, cut) + "...";
            if (out.length() <= max - 3) cut = out.length();
        }
        return out.toString();
    }
}
