package dev.recount.tools.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.Timestamps;
import dev.recount.tools.generate.GroundTruth;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/** What a demo run did, read back from PostgreSQL and the topics (not from the demo's own bookkeeping). */
record DemoSummary(
        long recordsSent,
        long validMain,
        long duplicatesSent,
        long invalidSent,
        Map<String, Long> deadLetterByReason,
        long tooLate,
        long windows,
        long lateRefirings,
        BigInteger streamSpend,
        BigInteger finalSpend,
        BigInteger expectedSpend,
        long streamEvents,
        AttributionMetrics streamAttribution,
        AttributionMetrics finalAttribution,
        AttributionMetrics expectedAttribution) {

    static DemoSummary collect(Map<String, String> env, RecountConfig cfg, Instant from, Instant to, GroundTruth truth)
            throws SQLException, IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, Long> byReason = new TreeMap<>();
        for (byte[] v : DemoConnections.readTopic(env, DemoWorkspace.DEAD_LETTER)) {
            byReason.merge(json.readTree(v).path("reason").asText("?"), 1L, Long::sum);
        }
        long tooLate = DemoConnections.readTopic(env, DemoWorkspace.BACKFILL).size();
        long windows;
        long refirings;
        BigInteger streamSpend;
        long streamEvents;
        BigInteger finalSpend;
        AttributionMetrics streamAttribution;
        AttributionMetrics finalAttribution;
        try (Connection c = DemoConnections.admin(env);
                Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + DemoWorkspace.SCHEMA);
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*), coalesce(sum(revision - 1), 0),"
                    + " coalesce(sum(spend_micros), 0) AS spend, coalesce(sum(events), 0) FROM stream_window_metrics"
                    + " WHERE window_start >= ? AND window_start < ?")) {
                Timestamps.bind(ps, 1, from.toEpochMilli());
                Timestamps.bind(ps, 2, to.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    windows = rs.getLong(1);
                    refirings = rs.getLong(2);
                    streamSpend = MetricColumns.exact(rs, "spend");
                    streamEvents = rs.getLong(4);
                }
            }
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT coalesce(sum(spend_micros), 0) AS spend FROM window_metrics"
                            + " WHERE window_start >= ? AND window_start < ?")) {
                Timestamps.bind(ps, 1, from.toEpochMilli());
                Timestamps.bind(ps, 2, to.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    finalSpend = MetricColumns.exact(rs, "spend");
                }
            }
            streamAttribution = attribution(c, "stream_attribution_metrics", from, to);
            finalAttribution = attribution(c, "attribution_metrics", from, to);
        }
        long sent = truth.validMain() + truth.validTail() + truth.duplicates() + truth.invalidTotal();
        return new DemoSummary(
                sent,
                truth.validMain(),
                truth.duplicates(),
                truth.invalidTotal(),
                byReason,
                tooLate,
                windows,
                refirings,
                streamSpend,
                finalSpend,
                truth.mainTotals().spendMicros(),
                streamEvents,
                streamAttribution,
                finalAttribution,
                truth.attributionMainTotals());
    }

    /** The attribution totals of {@code relation} (the stream's table or the serving view) over the range. */
    private static AttributionMetrics attribution(Connection c, String relation, Instant from, Instant to)
            throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT coalesce(sum(attributed_clicks), 0) AS attributed_clicks,"
                        + " coalesce(sum(attributed_conversions), 0) AS attributed_conversions,"
                        + " coalesce(sum(unattributed_clicks), 0) AS unattributed_clicks,"
                        + " coalesce(sum(attributed_spend_micros), 0) AS attributed_spend_micros FROM " + relation
                        + " WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, from.toEpochMilli());
            Timestamps.bind(ps, 2, to.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return AttributionRow.readMetrics(rs, "");
            }
        }
    }

    /** @param lookYourself a shell command line that shows the served rows, exactly as the user can paste it */
    void print(
            PrintWriter out,
            String verdict,
            Path report,
            String webUi,
            boolean streamStillRunning,
            String lookYourself) {
        BigInteger diff = finalSpend.subtract(streamSpend);
        out.println();
        out.println("recount demo: summary");
        out.printf(
                "  %-28s %,d (%,d valid in the main range, %,d duplicate sends, %,d invalid)%n",
                "records sent", recordsSent, validMain, duplicatesSent, invalidSent);
        out.printf(
                "  %-28s %,d %s%n",
                "dead-letter records",
                deadLetterByReason.values().stream().mapToLong(Long::longValue).sum(),
                deadLetterByReason);
        out.printf(
                "  %-28s %,d windows, %,d late re-firings (revision > 1)%n", "stream results", windows, lateRefirings);
        out.printf("  %-28s %,d (on the backfill topic, recomputed by the batch layer)%n", "too-late events", tooLate);
        out.printf("  %-28s %s%n", "stream spend", money(streamSpend));
        out.printf(
                "  %-28s %s  (generator's ground truth: %s)%n",
                "final spend (window_metrics)", money(finalSpend), money(expectedSpend));
        out.printf(
                "  %-28s %s (%s of final)%n",
                "difference",
                money(diff),
                finalSpend.signum() == 0
                        ? "n/a"
                        : new BigDecimal(diff)
                                        .multiply(BigDecimal.valueOf(100))
                                        .divide(new BigDecimal(finalSpend), 3, RoundingMode.HALF_EVEN)
                                        .toPlainString()
                                + "%");
        out.printf(
                "  %-28s stream %s; final %s  (generator's ground truth: %s)%n",
                "attribution (" + DemoWorkspace.ATTRIBUTION_WINDOW + ")",
                attribution(streamAttribution),
                attribution(finalAttribution),
                attribution(expectedAttribution));
        out.printf("  %-28s %s%n", "verdict", verdict);
        out.printf("  %-28s %s%n", "report", report);
        out.printf("  %-28s %s%s%n", "Flink Web UI", webUi, streamStillRunning ? "" : " (served while the job ran)");
        out.printf("  %-28s %s%n", "look yourself", lookYourself);
    }

    /** "12 attributed / 3 unattributed clicks, 1 conversion, 7.500000 spend" */
    static String attribution(AttributionMetrics m) {
        return m.attributedClicks() + " attributed / " + m.unattributedClicks() + " unattributed clicks, "
                + m.attributedConversions() + " conversions, " + money(m.attributedSpendMicros()) + " spend";
    }

    /** micro-units → currency units with six decimals, exactly (no floating point). */
    static String money(BigInteger micros) {
        return new BigDecimal(micros, 6).toPlainString();
    }
}
