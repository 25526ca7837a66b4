package dev.recount.oracle;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One set's truth: its rows, and its attribution rows when the set computes attribution (else null).
 *
 * @param rows        per key, the measures' values in {@link Definitions.MetricSet#measureNames()} order
 * @param attribution per key of the click, the values of {@link #ATTRIBUTION_COLUMNS}; null when the set has none
 */
public record SetTruth(
        Definitions.MetricSet set,
        SortedMap<Key, List<BigInteger>> rows,
        SortedMap<Key, List<BigInteger>> attribution) {

    public static final List<String> ATTRIBUTION_COLUMNS =
            List.of("attributed_clicks", "attributed_conversions", "unattributed_clicks", "attributed_spend_micros");

    public String name() {
        return set.name();
    }

    /** The rows (and attribution rows) whose window starts in {@code [fromMillis, toMillis)}. */
    public SetTruth within(long fromMillis, long toMillis) {
        return new SetTruth(
                set,
                between(rows, fromMillis, toMillis),
                attribution == null ? null : between(attribution, fromMillis, toMillis));
    }

    /** Every measure summed over the rows, in {@link Definitions.MetricSet#measureNames()} order. */
    public List<BigInteger> totals() {
        return sum(rows, set.measures().size());
    }

    /** The attribution values summed over the rows; null when the set has no attribution. */
    public List<BigInteger> attributionTotals() {
        return attribution == null ? null : sum(attribution, ATTRIBUTION_COLUMNS.size());
    }

    /** The rows as CSV: {@code window_start} (ISO-8601 UTC), the dimensions, the measures; by key. */
    public String csv() {
        return csv(set.measureNames(), rows);
    }

    /** The attribution rows as CSV; null when the set has no attribution. */
    public String attributionCsv() {
        return attribution == null ? null : csv(ATTRIBUTION_COLUMNS, attribution);
    }

    private String csv(List<String> valueColumns, SortedMap<Key, List<BigInteger>> data) {
        List<String> header = new ArrayList<>();
        header.add("window_start");
        header.addAll(set.dimensions());
        header.addAll(valueColumns);
        StringBuilder out = new StringBuilder(line(header));
        for (Map.Entry<Key, List<BigInteger>> row : data.entrySet()) {
            List<String> cells = new ArrayList<>();
            cells.add(Instant.ofEpochMilli(row.getKey().windowStart()).toString());
            cells.addAll(row.getKey().dimensions());
            row.getValue().forEach(v -> cells.add(v.toString()));
            out.append(line(cells));
        }
        return out.toString();
    }

    /** One CSV line (RFC 4180: a cell holding a comma, a quote or a line break is quoted, its quotes doubled). */
    private static String line(List<String> cells) {
        StringBuilder b = new StringBuilder();
        for (String c : cells) {
            if (b.length() > 0) b.append(',');
            boolean quote = c.contains(",") || c.contains("\"") || c.contains("\n") || c.contains("\r");
            b.append(quote ? '"' + c.replace("\"", "\"\"") + '"' : c);
        }
        return b.append('\n').toString();
    }

    private static SortedMap<Key, List<BigInteger>> between(SortedMap<Key, List<BigInteger>> data, long from, long to) {
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        data.forEach((k, v) -> {
            if (k.windowStart() >= from && k.windowStart() < to) out.put(k, v);
        });
        return out;
    }

    private static List<BigInteger> sum(SortedMap<Key, List<BigInteger>> data, int columns) {
        BigInteger[] t = SetCounter.zeros(columns);
        for (List<BigInteger> v : data.values()) for (int i = 0; i < columns; i++) t[i] = t[i].add(v.get(i));
        return List.of(t);
    }
}
