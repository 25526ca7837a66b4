package dev.recount.deploy.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.Timestamps;
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
record DemoSummary(long recordsSent, long validMain, long duplicatesSent, long invalidSent,
                   Map<String, Long> deadLetterByReason, long tooLate, long windows, long lateRefirings,
                   BigInteger streamSpend, BigInteger finalSpend, BigInteger expectedSpend, long streamEvents) {

    static DemoSummary collect(Map<String, String> env, RecountConfig cfg, Instant from, Instant to, JsonNode truth)
            throws SQLException, IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, Long> byReason = new TreeMap<>();
        for (byte[] v : DemoRun.readTopic(env, DemoRun.DEAD_LETTER)) {
            byReason.merge(json.readTree(v).path("reason").asText("?"), 1L, Long::sum);
        }
        long tooLate = DemoRun.readTopic(env, DemoRun.BACKFILL).size();
        long windows;
        long refirings;
        BigInteger streamSpend;
        long streamEvents;
        BigInteger finalSpend;
        try (Connection c = DemoRun.admin(env); Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + DemoRun.SCHEMA);
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
            try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(sum(spend_micros), 0) AS spend FROM window_metrics"
                    + " WHERE window_start >= ? AND window_start < ?")) {
                Timestamps.bind(ps, 1, from.toEpochMilli());
                Timestamps.bind(ps, 2, to.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    finalSpend = MetricColumns.exact(rs, "spend");
                }
            }
        }
        long validMain = truth.path("valid_main").asLong();
        long sent = validMain + truth.path("valid_tail").asLong() + truth.path("duplicates_sent").asLong()
                + truth.path("invalid_total").asLong();
        return new DemoSummary(sent, validMain, truth.path("duplicates_sent").asLong(), truth.path("invalid_total").asLong(),
                byReason, tooLate, windows, refirings, streamSpend, finalSpend,
                truth.path("main_totals").path("spend_micros").bigIntegerValue(), streamEvents);
    }

    /** @param lookYourself a shell command line that shows the served rows, exactly as the user can paste it */
    void print(PrintWriter out, String verdict, Path report, String webUi, boolean streamStillRunning, String lookYourself) {
        BigInteger diff = finalSpend.subtract(streamSpend);
        out.println();
        out.println("recount demo: summary");
        out.printf("  %-28s %,d (%,d valid in the main range, %,d duplicate sends, %,d invalid)%n",
                "records sent", recordsSent, validMain, duplicatesSent, invalidSent);
        out.printf("  %-28s %,d %s%n", "dead-letter records", deadLetterByReason.values().stream().mapToLong(Long::longValue).sum(),
                deadLetterByReason);
        out.printf("  %-28s %,d windows, %,d late re-firings (revision > 1)%n", "stream results", windows, lateRefirings);
        out.printf("  %-28s %,d (on the backfill topic, recomputed by the batch layer)%n", "too-late events", tooLate);
        out.printf("  %-28s %s%n", "stream spend", money(streamSpend));
        out.printf("  %-28s %s  (generator's ground truth: %s)%n", "final spend (window_metrics)", money(finalSpend),
                money(expectedSpend));
        out.printf("  %-28s %s (%s of final)%n", "difference", money(diff),
                finalSpend.signum() == 0 ? "n/a" : new BigDecimal(diff).multiply(BigDecimal.valueOf(100))
                        .divide(new BigDecimal(finalSpend), 3, RoundingMode.HALF_EVEN).toPlainString() + "%");
        out.printf("  %-28s %s%n", "verdict", verdict);
        out.printf("  %-28s %s%n", "report", report);
        out.printf("  %-28s %s%s%n", "Flink Web UI", webUi, streamStillRunning ? "" : " (served while the job ran)");
        out.printf("  %-28s %s%n", "look yourself", lookYourself);
    }

    /** micro-units → currency units with six decimals, exactly (no floating point). */
    static String money(BigInteger micros) {
        return new BigDecimal(micros, 6).toPlainString();
    }
}
