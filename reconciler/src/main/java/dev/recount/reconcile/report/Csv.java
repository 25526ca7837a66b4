package dev.recount.reconcile.report;

import java.io.Flushable;
import java.io.IOException;
import java.util.List;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;

/**
 * diffs.csv through Apache Commons CSV: RFC 4180, CRLF line ends, a cell quoted when it holds a comma, a quote, a
 * line break, or starts or ends with a character that could be mistaken for padding or a comment. Text taken from
 * the data (ids) goes through {@link #text} ({@link SpreadsheetText}: bidi controls made visible, formulas
 * defused); numbers through {@link #number}, unguarded, so a negative difference stays a number.
 */
public final class Csv implements Flushable {
    /** The format diffs.csv is written in; a reader parses it back with the same. */
    public static final CSVFormat FORMAT =
            CSVFormat.RFC4180.builder().setRecordSeparator("\r\n").get();

    private static final String DELIMITER = FORMAT.getDelimiterString();

    private final Appendable out;
    /**
     * Each record is printed here first and handed to {@code out} in one piece: Commons CSV appends a cell in many
     * small pieces, and a {@link java.io.BufferedWriter} takes its lock for every one (about a third of writing
     * diffs.csv for 20,000 differing keys).
     */
    private final StringBuilder record = new StringBuilder(512);

    private final CSVPrinter printer;

    public Csv(Appendable out) throws IOException {
        this.out = out;
        this.printer = new CSVPrinter(record, FORMAT);
    }

    /**
     * Writes one record; each cell is already made safe by {@link #text} or {@link #number}. A cell after the first
     * that {@link #printsAsItIs} is appended here, after the delimiter, exactly as Commons CSV would print it; every other
     * cell goes through Commons CSV. Most cells of diffs.csv are numbers, and printing each through the library's
     * general path was about half of writing a differing key's row (20,000 rows: 0.14–0.24 s of 0.25–0.46 s on
     * the benchmark's machine, docs/benchmarks.md §10).
     */
    public void row(List<String> cells) throws IOException {
        record.setLength(0);
        boolean first = true;
        for (String cell : cells) {
            if (!first && printsAsItIs(cell)) record.append(DELIMITER).append(cell);
            else printer.print(cell);
            first = false;
        }
        printer.println();
        out.append(record);
    }

    /**
     * Whether {@link #FORMAT} prints {@code value}, in any field but a record's first, as it is: nothing but ASCII
     * letters, digits and {@code - + . : _} (so no comma, quote or line break, and neither a first character up to
     * {@code '#'} nor a last one up to a space, which the minimal quoting quotes), or nothing at all (an empty field
     * is quoted only as a record's first). Numbers, instants, dates, statuses and booleans are.
     */
    static boolean printsAsItIs(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean plain = (c >= '0' && c <= '9')
                    || (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || c == '-'
                    || c == '+'
                    || c == '.'
                    || c == ':'
                    || c == '_';
            if (!plain) return false;
        }
        return true;
    }

    @Override
    public void flush() throws IOException {
        if (out instanceof Flushable f) f.flush();
    }

    /** A cell holding text from the data. */
    public static String text(String value) {
        return SpreadsheetText.neutralise(value);
    }

    /** A cell holding a number we formatted ourselves (may start with '-'). */
    public static String number(String formatted) {
        return formatted == null ? "" : formatted;
    }
}
