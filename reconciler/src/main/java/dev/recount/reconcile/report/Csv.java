package dev.recount.reconcile.report;

import java.io.IOException;
import java.io.Writer;
import java.util.List;

/**
 * RFC 4180 CSV. Text taken from the data (ids) also gets a guard against formula injection: a spreadsheet
 * treats a cell starting with {@code = + - @} (or tab / carriage return) as a formula, so such a value is
 * prefixed with an apostrophe. Numbers are written with {@link #number}, unguarded, so a negative difference
 * stays a number.
 */
public final class Csv {
    private final Writer out;

    public Csv(Writer out) {
        this.out = out;
    }

    /** Writes one record; each cell is already made safe by {@link #text} or {@link #number}. */
    public void row(List<String> cells) throws IOException {
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) out.write(',');
            out.write(quote(cells.get(i)));
        }
        out.write("\r\n");
    }

    /** A cell holding text from the data. */
    public static String text(String value) {
        if (value == null || value.isEmpty()) return "";
        char first = value.charAt(0);
        if (first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' || first == '\r') {
            return "'" + value;
        }
        return value;
    }

    /** A cell holding a number we formatted ourselves (may start with '-'). */
    public static String number(String formatted) {
        return formatted == null ? "" : formatted;
    }

    static String quote(String cell) {
        if (cell == null) return "";
        boolean needs = cell.indexOf(',') >= 0 || cell.indexOf('"') >= 0 || cell.indexOf('\n') >= 0
                || cell.indexOf('\r') >= 0 || (!cell.isEmpty() && (cell.charAt(0) == ' ' || cell.charAt(cell.length() - 1) == ' '));
        return needs ? '"' + cell.replace("\"", "\"\"") + '"' : cell;
    }
}
