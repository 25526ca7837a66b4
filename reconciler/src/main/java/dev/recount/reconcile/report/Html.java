package dev.recount.reconcile.report;

/** HTML escaping for text and attribute values. Every value from the data passes through here. */
public final class Html {
    private Html() {}

    public static String escape(String s) {
        if (s == null) return "";
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> sb.append("&amp;");
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&#39;");
                // Control characters other than tab/newline are not allowed in HTML text; show them, don't pass them.
                default -> {
                    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') sb.append('\uFFFD'); else sb.append(c);
                }
            }
        }
        return sb.toString();
    }
}
