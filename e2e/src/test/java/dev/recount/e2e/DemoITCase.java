package dev.recount.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.Timestamps;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.Topics;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's acceptance test: {@code ./recount demo} at reduced size, run exactly as a user runs it (the
 * launcher; the stream job, Spark and the reconciler each in their own JVM), then checked against the
 * generator's ground truth:
 * <ul>
 *   <li>after reconciliation {@code window_metrics} equals the ground truth for every key of the range;</li>
 *   <li>the dead-letter topic holds exactly the invalid records sent, by reason;</li>
 *   <li>every unique valid event is accounted for exactly once: counted in {@code stream_window_metrics} or on the
 *       backfill topic, never both, never neither — per window key and metric, stream + backfill = truth.</li>
 * </ul>
 */
class DemoITCase {
    static final Instant START = Instant.parse("2026-11-29T10:00:00Z");
    static final Instant MAIN_END = START.plus(Duration.ofMinutes(3));

    static Path home;
    static LocalStack stack;
    static String output;

    @BeforeAll
    static void runTheDemo() throws Exception {
        home = Files.createTempDirectory("recount-demo-");
        // Started first, so the demo leaves it running for the checks below.
        stack = LocalStack.start(home);
        Path root = Path.of(System.getProperty("recount.root")).toAbsolutePath();
        ProcessBuilder pb = new ProcessBuilder(
                        root.resolve("recount").toString(),
                        "demo",
                        "--home",
                        home.toString(),
                        "--events",
                        "6000",
                        "--span",
                        "3m",
                        "--rate",
                        "1000",
                        "--seed",
                        "42",
                        "--start",
                        START.toString())
                .redirectErrorStream(true)
                .redirectOutput(home.resolve("demo-output.txt").toFile());
        pb.environment().put("RECOUNT_NO_BUILD", "1");
        pb.environment().put("RECOUNT_NO_LOCAL_ENV", "1");
        Process demo = pb.start();
        boolean done = demo.waitFor(8, TimeUnit.MINUTES);
        output = Files.readString(home.resolve("demo-output.txt"));
        if (!done) demo.destroyForcibly();
        assertThat(done).as("demo finished in time; output:\n" + output).isTrue();
        assertThat(demo.exitValue()).as("demo exit code; output:\n" + output).isZero();
    }

    @AfterAll
    static void stopStack() {
        if (stack != null) stack.stop();
    }

    /** One `correct` run, before the range backfill: the windows the too-late events named are final already. */
    @Test
    void correctMakesTheLateWindowsFinalBeforeTheRangeBackfill() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "(\\d+) window keys final in window_metrics with their" + " too-late events counted")
                .matcher(output);
        assertThat(output).contains("[6/8] correct: recomputing from the lake the windows the too-late events named");
        assertThat(m.find())
                .as("the correct step's result line in:%n%s", output)
                .isTrue();
        assertThat(Long.parseLong(m.group(1)))
                .as("window keys final after one correct run")
                .isPositive();
        assertThat(output.indexOf("[6/8] correct")).isLessThan(output.indexOf("[7/8] backfill range"));
    }

    @Test
    void printsTheSummaryAUserNeeds() {
        assertThat(output)
                .contains("[8/8] reconcile")
                .contains("recount demo: summary")
                .contains("dead-letter records")
                .contains("late re-firings")
                .contains("too-late events")
                .contains("final spend")
                .contains("verdict")
                .contains("report.html")
                .contains("Flink Web UI");
        // The closing hint works as printed: this stack's own env file (it stays up: the test started it), no
        // placeholders.
        assertThat(output)
                .contains(". " + home.toAbsolutePath().normalize().resolve("local.env") + " && psql -c")
                .doesNotContain("<home>")
                .doesNotContain("pkill");
    }

    @Test
    void windowMetricsEqualsTheGroundTruthForEveryKey() throws Exception {
        Map<WindowKey, WindowMetrics> truth = groundTruth();
        Map<WindowKey, WindowMetrics> served = new TreeMap<>(KEYS);
        try (Connection c = demoSchema();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT * FROM window_metrics WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, START.toEpochMilli());
            Timestamps.bind(ps, 2, MAIN_END.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    assertThat(rs.getBoolean("is_final")).isTrue();
                    served.put(key(rs), MetricColumns.read(rs));
                }
            }
        }
        assertThat(truth).isNotEmpty();
        assertThat(served).containsExactlyEntriesOf(truth);
    }

    /** Attribution as served after reconciliation equals the generator's ground truth (core's rule), key by key. */
    @Test
    void attributionMetricsEqualTheGroundTruthForEveryKey() throws Exception {
        Map<WindowKey, AttributionMetrics> truth = new TreeMap<>(KEYS);
        for (String line : Files.readAllLines(home.resolve("demo/truth/expected_attribution.csv"))) {
            String[] f = line.split(",");
            if (!f[0].equals("main")) continue;
            truth.put(
                    new WindowKey(Instant.parse(f[1]).toEpochMilli(), f[3], f[4]),
                    new AttributionMetrics(
                            Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]), new BigInteger(f[8])));
        }
        Map<WindowKey, AttributionMetrics> served = new TreeMap<>(KEYS);
        try (Connection c = demoSchema();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT * FROM attribution_metrics WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, START.toEpochMilli());
            Timestamps.bind(ps, 2, MAIN_END.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    assertThat(rs.getBoolean("is_final")).isTrue();
                    served.put(key(rs), AttributionRow.readMetrics(rs, ""));
                }
            }
        }
        assertThat(truth.values().stream()
                        .mapToLong(AttributionMetrics::attributedClicks)
                        .sum())
                .isPositive();
        assertThat(truth.values().stream()
                        .mapToLong(AttributionMetrics::unattributedClicks)
                        .sum())
                .isPositive();
        assertThat(served).containsExactlyEntriesOf(truth);
        assertThat(output).contains("attribution (2m)");
    }

    @Test
    void deadLetterTopicHoldsExactlyTheInvalidRecordsSent() throws Exception {
        JsonNode summary = new ObjectMapper()
                .readTree(home.resolve("demo/truth/summary.json").toFile());
        Map<String, Long> expected = new TreeMap<>();
        summary.path("invalid_by_reason").fields().forEachRemaining(e -> {
            if (e.getValue().asLong() > 0) expected.put(e.getKey(), e.getValue().asLong());
        });
        Map<String, Long> got = new TreeMap<>();
        ObjectMapper json = new ObjectMapper();
        for (ConsumerRecord<byte[], byte[]> r : readTopic("demo-ad-events-dlq")) {
            JsonNode dl = json.readTree(r.value());
            assertThat(dl.has("detail")
                            && dl.has("topic")
                            && dl.has("partition")
                            && dl.has("offset")
                            && dl.has("record_ts")
                            && dl.has("raw"))
                    .as(dl.toString())
                    .isTrue();
            got.merge(dl.get("reason").asText(), 1L, Long::sum);
        }
        assertThat(expected.keySet()).containsExactlyInAnyOrder("malformed", "schema", "timestamp");
        assertThat(got).isEqualTo(expected);
    }

    @Test
    void everyUniqueValidEventIsCountedOnceInTheStreamOrOnTheBackfillTopic() throws Exception {
        Map<WindowKey, MetricsAccumulator> accounted = new HashMap<>();
        try (Connection c = demoSchema();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT * FROM stream_window_metrics WHERE window_start >= ? AND window_start < ?")) {
            Timestamps.bind(ps, 1, START.toEpochMilli());
            Timestamps.bind(ps, 2, MAIN_END.toEpochMilli());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) accounted.put(key(rs), MetricsAccumulator.of(MetricColumns.read(rs)));
            }
        }
        Set<String> tooLateIds = new HashSet<>();
        long tooLate = 0;
        for (ConsumerRecord<byte[], byte[]> r : readTopic("demo-ad-events-late")) {
            BackfillRecord b = BackfillRecord.fromJson(new String(r.value(), StandardCharsets.UTF_8));
            assertThat(tooLateIds.add(b.event().eventId))
                    .as("event %s on the backfill topic twice", b.event().eventId)
                    .isTrue();
            assertThat(b.watermark()).isGreaterThanOrEqualTo(b.windowEnd() - 1);
            if (b.windowStart() < START.toEpochMilli() || b.windowStart() >= MAIN_END.toEpochMilli()) continue;
            tooLate++;
            accounted
                    .computeIfAbsent(
                            new WindowKey(b.windowStart(), b.event().campaignId, b.event().channelId),
                            k -> new MetricsAccumulator())
                    .add(b.event());
        }
        Map<WindowKey, WindowMetrics> got = new TreeMap<>(KEYS);
        accounted.forEach((k, acc) -> got.put(k, acc.toMetrics()));

        assertThat(tooLate)
                .as("the generator sends ~1%% too-late events; some must reach the backfill topic")
                .isPositive();
        assertThat(got).containsExactlyEntriesOf(groundTruth());
    }

    static final java.util.Comparator<WindowKey> KEYS = java.util.Comparator.comparingLong(WindowKey::windowStartMillis)
            .thenComparing(WindowKey::campaignId)
            .thenComparing(WindowKey::channelId);

    static Map<WindowKey, WindowMetrics> groundTruth() throws IOException {
        Map<WindowKey, WindowMetrics> truth = new TreeMap<>(KEYS);
        for (String line : Files.readAllLines(home.resolve("demo/truth/expected.csv"))) {
            String[] f = line.split(",");
            if (!f[0].equals("main")) continue;
            truth.put(
                    new WindowKey(Instant.parse(f[1]).toEpochMilli(), f[3], f[4]),
                    new WindowMetrics(
                            Long.parseLong(f[5]),
                            Long.parseLong(f[6]),
                            Long.parseLong(f[7]),
                            new BigInteger(f[8]),
                            Long.parseLong(f[9])));
        }
        return truth;
    }

    static WindowKey key(ResultSet rs) throws SQLException {
        return new WindowKey(
                Timestamps.read(rs, "window_start"), rs.getString("campaign_id"), rs.getString("channel_id"));
    }

    static Connection demoSchema() throws SQLException {
        Connection c = stack.adminConnection();
        try (Statement s = c.createStatement()) {
            s.execute("SET search_path TO demo");
        }
        return c;
    }

    static List<ConsumerRecord<byte[], byte[]>> readTopic(String topic) {
        return Topics.readCommitted(stack.bootstrapServers(), topic, Duration.ofMinutes(1));
    }
}
