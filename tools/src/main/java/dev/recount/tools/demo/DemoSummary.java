package dev.recount.tools.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.Durations;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.SetColumns;
import dev.recount.db.tables.Timestamps;
import dev.recount.db.tables.WindowMetricsView;
import dev.recount.oracle.Key;
import dev.recount.oracle.SetTruth;
import dev.recount.tools.generate.TrafficRun;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigInteger;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a demo run did, read back from PostgreSQL and the topics (not from the demo's own bookkeeping), and, per metric
 * set, what it serves against the oracle's truth of the records sent.
 */
record DemoSummary(
        long recordsSent,
        long validMain,
        long duplicatesSent,
        long invalidSent,
        Map<String, Long> deadLetterByReason,
        Map<String, Long> expectedDeadLetters,
        long tooLate,
        List<SetSummary> sets) {

    /**
     * One set over the demo's range: its stream rows, what {@code window_metrics} (or {@code <set>__window_metrics})
     * serves, and the truth, as totals in the truth's measure order; the served rows checked against the truth key by
     * key; and the same for attribution when the set has it (else those are null).
     *
     * @param tooLate events on the backfill topic that name this set (too late for its window)
     */
    record SetSummary(
            String name,
            List<String> dimensions,
            Duration window,
            List<String> measures,
            long windows,
            long lateRefirings,
            long tooLate,
            List<BigInteger> stream,
            List<BigInteger> served,
            List<BigInteger> truth,
            TruthCheck check,
            List<BigInteger> streamAttribution,
            List<BigInteger> servedAttribution,
            List<BigInteger> truthAttribution,
            TruthCheck attributionCheck) {

        boolean finalEqualsTruth() {
            return check.isExact() && (attributionCheck == null || attributionCheck.isExact());
        }
    }

    /** Whether every set serves exactly its truth, attribution included. */
    boolean finalEqualsTruth() {
        return sets.stream().allMatch(SetSummary::finalEqualsTruth);
    }

    static DemoSummary collect(
            Map<String, String> env, MetricSets definitions, Instant from, Instant to, TrafficRun.Result run)
            throws SQLException, IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, Long> byReason = new TreeMap<>();
        for (byte[] v : DemoConnections.readTopic(env, DemoWorkspace.DEAD_LETTER)) {
            byReason.merge(json.readTree(v).path("reason").asText("?"), 1L, Long::sum);
        }
        List<byte[]> late = DemoConnections.readTopic(env, DemoWorkspace.BACKFILL);
        Map<String, Long> tooLateBySet = new TreeMap<>();
        for (byte[] v : late) {
            for (String set : BackfillRecord.fromJson(v).setNames()) tooLateBySet.merge(set, 1L, Long::sum);
        }
        List<SetSummary> sets = new ArrayList<>();
        try (Connection c = DemoConnections.admin(env);
                Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + DemoWorkspace.SCHEMA);
            for (MetricSet set : definitions.sets()) {
                SetTruth truth = run.truth().set(set.name()).within(from.toEpochMilli(), to.toEpochMilli());
                sets.add(summarize(c, set, truth, from, to, tooLateBySet.getOrDefault(set.name(), 0L)));
            }
        }
        return new DemoSummary(
                run.tally().records(),
                run.tally().validMain(),
                run.tally().duplicates(),
                run.tally().invalidTotal(),
                byReason,
                run.truth().invalidByReason(),
                late.size(),
                sets);
    }

    /** One set over {@code [from, to)} on {@code c}, whose search path is the demo's schema. */
    static SetSummary summarize(Connection c, MetricSet set, SetTruth truth, Instant from, Instant to, long tooLate)
            throws SQLException {
        SetTables tables = new SetTables(set);
        List<String> measures = truth.set().measureNames();
        int[] order = new int[measures.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = set.measureIndex(measures.get(i));
            if (order[i] < 0) {
                throw new IllegalStateException("set " + set.name() + " has no measure " + measures.get(i)
                        + ", which the oracle read from the same file: " + set.measureNames());
            }
        }
        SortedMap<Key, List<BigInteger>> served = new TreeMap<>();
        for (WindowMetricsView.Row row :
                new WindowMetricsView(tables).readRange(c, from.toEpochMilli(), to.toEpochMilli())) {
            MeasureValues v = row.window().values();
            List<BigInteger> values = new ArrayList<>();
            for (int i : order) values.add(v.get(i));
            served.put(
                    new Key(
                            row.window().key().windowStartMillis(),
                            row.window().key().dimensions()),
                    values);
        }
        StreamTotals stream = streamTotals(c, tables, measures, from, to);
        List<BigInteger> streamAttribution = null;
        List<BigInteger> servedAttribution = null;
        TruthCheck attributionCheck = null;
        if (truth.attribution() != null) {
            int columns = SetTruth.ATTRIBUTION_COLUMNS.size();
            streamAttribution = sums(attributionRows(c, tables, tables.streamAttributionMetrics(), from, to), columns);
            SortedMap<Key, List<BigInteger>> servedRows =
                    attributionRows(c, tables, tables.name("attribution_metrics"), from, to);
            servedAttribution = sums(servedRows, columns);
            attributionCheck = TruthCheck.compare(SetTruth.ATTRIBUTION_COLUMNS, servedRows, truth.attribution());
        }
        return new SetSummary(
                set.name(),
                set.dimensionNames(),
                set.window(),
                measures,
                stream.windows,
                stream.refirings,
                tooLate,
                stream.sums,
                sums(served, measures.size()),
                truth.totals(),
                TruthCheck.compare(measures, served, truth.rows()),
                streamAttribution,
                servedAttribution,
                truth.attributionTotals(),
                attributionCheck);
    }

    private record StreamTotals(long windows, long refirings, List<BigInteger> sums) {}

    /** The stream's rows of the range: how many, how many late re-firings, and their sums. */
    private static StreamTotals streamTotals(
            Connection c, SetTables tables, List<String> measures, Instant from, Instant to) throws SQLException {
        StringBuilder sql =
                new StringBuilder("SELECT count(*) AS windows, coalesce(sum(revision - 1), 0) AS refirings");
        // numeric: sums of many rows may pass 64 bits (and 38 digits)
        for (String m : measures)
            sql.append(", coalesce(sum(").append(m).append("), 0)::numeric AS ").append(m);
        sql.append(" FROM ")
                .append(tables.streamWindowMetrics())
                .append(" WHERE window_start >= ? AND window_start < ?");
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            Timestamps.bind(ps, 1, from.toEpochMilli());
            Timestamps.bind(ps, 2, to.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                List<BigInteger> sums = new ArrayList<>();
                for (String m : measures) sums.add(SetColumns.exact(rs, m));
                return new StreamTotals(rs.getLong("windows"), rs.getLong("refirings"), sums);
            }
        }
    }

    /** The attribution rows of {@code relation} (the stream's table or the serving view) over the range. */
    private static SortedMap<Key, List<BigInteger>> attributionRows(
            Connection c, SetTables tables, String relation, Instant from, Instant to) throws SQLException {
        SetColumns columns = new SetColumns(tables);
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        for (AttributionRow row : columns.readRange(
                c, relation, from.toEpochMilli(), to.toEpochMilli(), rs -> AttributionRow.read(rs, columns))) {
            List<BigInteger> values = new ArrayList<>();
            for (int i = 0; i < SetTruth.ATTRIBUTION_COLUMNS.size(); i++)
                values.add(row.metrics().get(i));
            out.put(new Key(row.key().windowStartMillis(), row.key().dimensions()), values);
        }
        return out;
    }

    /** The {@code columns} values of {@code rows} summed. */
    private static List<BigInteger> sums(SortedMap<Key, List<BigInteger>> rows, int columns) {
        List<BigInteger> out = new ArrayList<>(java.util.Collections.nCopies(columns, BigInteger.ZERO));
        for (List<BigInteger> v : rows.values()) {
            for (int i = 0; i < columns; i++) out.set(i, out.get(i).add(v.get(i)));
        }
        return out;
    }

    /**
     * @param reconcile    what the range's reconciliation said (within or beyond tolerance)
     * @param lookYourself a shell command line that shows the served rows, exactly as the user can paste it
     */
    void print(
            PrintWriter out,
            String reconcile,
            Duration attributionWindow,
            Path report,
            String webUi,
            boolean streamStillRunning,
            String lookYourself) {
        out.println();
        out.println("recount demo: summary");
        line(
                out,
                "records sent",
                String.format(
                        "%,d (%,d valid in the main range, %,d duplicate sends, %,d invalid)",
                        recordsSent, validMain, duplicatesSent, invalidSent));
        line(
                out,
                "dead-letter records",
                String.format(
                        "%,d %s (the oracle expects %s)",
                        deadLetterByReason.values().stream()
                                .mapToLong(Long::longValue)
                                .sum(),
                        deadLetterByReason,
                        new TreeMap<>(expectedDeadLetters)));
        line(
                out,
                "too-late events",
                String.format("%,d (on the backfill topic, recomputed by the batch layer)", tooLate));
        for (SetSummary s : sets) {
            out.println();
            line(
                    out,
                    "set " + s.name(),
                    String.join(" x ", s.dimensions()) + ", " + Durations.format(s.window()) + " windows; "
                            + String.format(
                                    "stream: %,d windows, %,d late re-firings, %,d events too late for it",
                                    s.windows(), s.lateRefirings(), s.tooLate()));
            line(out, "  stream", values(s.measures(), s.stream()));
            line(out, "  final (" + servedName(s.name()) + ")", values(s.measures(), s.served()));
            line(out, "  truth (oracle)", values(s.measures(), s.truth()));
            line(out, "  final - stream", difference(s.measures(), s.served(), s.stream()));
            if (s.attributionCheck() != null) {
                line(
                        out,
                        "  attribution (" + Durations.format(attributionWindow) + ")",
                        "stream " + values(SetTruth.ATTRIBUTION_COLUMNS, s.streamAttribution()));
                line(out, "", "final  " + values(SetTruth.ATTRIBUTION_COLUMNS, s.servedAttribution()));
                line(out, "", "truth  " + values(SetTruth.ATTRIBUTION_COLUMNS, s.truthAttribution()));
                line(out, "  final == truth (attribution)", s.attributionCheck().verdict());
            }
            line(out, "  final == truth", s.check().verdict());
        }
        out.println();
        line(out, "reconcile", reconcile);
        line(
                out,
                "verdict",
                finalEqualsTruth()
                        ? "final == truth for every set (" + sets.size() + ")"
                        : "final differs from the truth for "
                                + sets.stream()
                                        .filter(s -> !s.finalEqualsTruth())
                                        .map(SetSummary::name)
                                        .toList());
        line(out, "report", report.toString());
        line(out, "Flink Web UI", webUi + (streamStillRunning ? "" : " (served while the job ran)"));
        line(out, "look yourself", lookYourself);
    }

    /** The serving view of a set: {@code window_metrics} for the default set, {@code <set>__window_metrics} else. */
    static String servedName(String set) {
        return set.equals(MetricSet.DEFAULT) ? "window_metrics" : set + "__window_metrics";
    }

    private static void line(PrintWriter out, String label, String text) {
        out.printf("  %-30s %s%n", label, text);
    }

    /** "impressions 57,812, clicks 1,790, spend_micros 203,512,345" */
    static String values(List<String> names, List<BigInteger> values) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            parts.add(names.get(i) + " " + String.format("%,d", values.get(i)));
        }
        return String.join(", ", parts);
    }

    /** What the batch layer changed: final − stream, per measure that differs; what the stream alone would have said. */
    static String difference(List<String> names, List<BigInteger> served, List<BigInteger> stream) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            BigInteger d = served.get(i).subtract(stream.get(i));
            if (d.signum() != 0) parts.add(names.get(i) + " " + String.format("%+,d", d));
        }
        return parts.isEmpty() ? "none" : String.join(", ", parts) + " (what the speed layer alone would have missed)";
    }
}
