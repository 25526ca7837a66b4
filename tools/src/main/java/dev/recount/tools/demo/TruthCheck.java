package dev.recount.tools.demo;

import dev.recount.oracle.Key;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeSet;

/**
 * Served rows against the oracle's truth, key by key and value by value: every key of either side, and which differ
 * (missing, extra, or another value), the first few described for people.
 *
 * @param keys        the keys of the two sides together
 * @param differing   how many keys differ
 * @param differences the first {@link #SHOWN} of them, described
 */
record TruthCheck(int keys, int differing, List<String> differences) {
    static final int SHOWN = 5;

    boolean isExact() {
        return differing == 0;
    }

    /**
     * @param columns the names of the values, in the order both sides hold them
     */
    static TruthCheck compare(
            List<String> columns, SortedMap<Key, List<BigInteger>> served, SortedMap<Key, List<BigInteger>> truth) {
        TreeSet<Key> keys = new TreeSet<>(served.keySet());
        keys.addAll(truth.keySet());
        int differing = 0;
        List<String> shown = new ArrayList<>();
        for (Key k : keys) {
            String difference = difference(columns, served.get(k), truth.get(k));
            if (difference == null) continue;
            if (++differing <= SHOWN) shown.add(describe(k) + ": " + difference);
        }
        return new TruthCheck(keys.size(), differing, shown);
    }

    private static String difference(List<String> columns, List<BigInteger> served, List<BigInteger> truth) {
        if (served == null) return "missing (truth " + values(columns, truth) + ")";
        if (truth == null) return "served but not in the truth (" + values(columns, served) + ")";
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            if (!served.get(i).equals(truth.get(i))) {
                parts.add(columns.get(i) + " " + served.get(i) + " instead of " + truth.get(i));
            }
        }
        return parts.isEmpty() ? null : String.join(", ", parts);
    }

    private static String values(List<String> columns, List<BigInteger> values) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) parts.add(columns.get(i) + " " + values.get(i));
        return String.join(", ", parts);
    }

    static String describe(Key k) {
        return Instant.ofEpochMilli(k.windowStart()) + " " + String.join("/", k.dimensions());
    }

    /** "yes, every key and value (465 keys)" or "NO: 3 of 465 keys differ; ..." */
    String verdict() {
        if (isExact()) return "yes, every key and value (" + keys + " keys)";
        return "NO: " + differing + " of " + keys + " keys differ; " + String.join("; ", differences)
                + (differing > differences.size() ? "; ..." : "");
    }
}
