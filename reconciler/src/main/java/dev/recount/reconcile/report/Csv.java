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

    /** Writes one record; each cell is already made safe by {@link #text} or {@link #number}. */
    public void row(List<String> cells) throws IOException {
        record.setLength(0);
        printer.printRecord(cells);
        out.append(record);
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
