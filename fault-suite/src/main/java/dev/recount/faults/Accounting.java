package dev.recount.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.MetricColumns;
import dev.recount.db.tables.Timestamps;
import dev.recount.testkit.Topics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Checks every output of a pipeline against its scenario's ground truth, the way finance would:
 * <ul>
 *   <li>stream rows + unique backfill events = truth, per window key and metric (what is missing was lost, what is
 *       extra was counted twice); no event id twice on the backfill topic, none that is not a real event;</li>
 *   <li>the dead-letter topic holds exactly the invalid records sent, by reason;</li>
 *   <li>the lake holds every valid record that was sent (first sends and duplicates) exactly once, and what the
 *       stream recorded as archived into each lake hour (lake_archived_rows) is what the hour's files hold;</li>
 *   <li>after backfill and reconcile, {@code window_metrics} equals the truth for every key.</li>
 * </ul>
 * Topics are read with isolation.level=read_committed, as recount's consumers read them.
 */
final class Accounting {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Past every event a scenario sends: the end of the ledger's range. */
    private static final long LEDGER_UNTIL =
            Instant.parse("2100-01-01T00:00:00Z").toEpochMilli();
    /** What the stream job must never log: the connectors' data-loss warnings, refused rows, failed commits. */
    private static final Pattern BAD_LOG = Pattern.compile(
            "(?i)data loss|refused to replace|unable to commit transaction|PostgreSQL refused|too late at the window operator");

    /** What one check found; zero everywhere means the promise held. */
    record Result(
            long eventsLost,
            long eventsDoubled,
            long backfillDuplicates,
            long backfillUnknown,
            long deadLettersLost,
            long deadLettersExtra,
            long lakeMissing,
            long lakeDuplicates,
            long finalKeysWrong,
            List<String> problems,
            List<String> examples,
            String seen) {
        boolean clean() {
            return eventsLost == 0
                    && eventsDoubled == 0
                    && backfillDuplicates == 0
                    && backfillUnknown == 0
                    && deadLettersLost == 0
                    && deadLettersExtra == 0
                    && lakeMissing == 0
                    && lakeDuplicates == 0
                    && finalKeysWrong == 0
                    && problems.isEmpty();
        }

        @Override
        public String toString() {
            return String.format(
                            "lost %d, doubled %d, backfill duplicates %d, backfill unknown %d, dead letters lost %d / "
                                    + "extra %d, lake missing %d / duplicated %d, final keys wrong %d, problems %s%s",
                            eventsLost,
                            eventsDoubled,
                            backfillDuplicates,
                            backfillUnknown,
                            deadLettersLost,
                            deadLettersExtra,
                            lakeMissing,
                            lakeDuplicates,
                            finalKeysWrong,
                            problems,
                            examples.isEmpty() ? "" : "; e.g. " + String.join("; ", examples))
                    + (seen.isEmpty() ? "" : " (" + seen + ")");
        }
    }

    private final Pipeline pipeline;
    private final Scenario scenario;
    private final String bootstrapServers;
    private final WindowAlignment windows;

    Accounting(Pipeline pipeline, Scenario scenario, String bootstrapServers, WindowAlignment windows) {
        this.pipeline = pipeline;
        this.scenario = scenario;
        this.bootstrapServers = bootstrapServers;
        this.windows = windows;
    }

    /** The stream's outputs (rows, both topics, lake, logs), after it has drained. */
    Result checkStream() throws Exception {
        List<String> examples = new ArrayList<>();
        Map<WindowKey, WindowMetrics> rows = read("stream_window_metrics");

        Map<WindowKey, MetricsAccumulator> backfilled = new HashMap<>();
        Map<WindowKey, List<BackfillRecord>> backfillByKey = new HashMap<>();
        Set<String> backfillIds = new HashSet<>();
        long duplicates = 0;
        long unknown = 0;
        for (ConsumerRecord<byte[], byte[]> r : readCommitted(pipeline.backfill)) {
            BackfillRecord b = BackfillRecord.fromJson(r.value());
            String id = b.event().eventId;
            if (!backfillIds.add(id)) {
                duplicates++;
                example(examples, "event " + id + " twice on the backfill topic");
                continue;
            }
            AdEvent truthEvent = scenario.events().get(id);
            if (truthEvent == null) {
                unknown++;
                example(examples, "backfill event " + id + " was never sent as a valid event");
                continue;
            }
            backfilled
                    .computeIfAbsent(key(truthEvent), k -> new MetricsAccumulator())
                    .add(truthEvent);
            backfillByKey
                    .computeIfAbsent(key(truthEvent), k -> new ArrayList<>())
                    .add(b);
        }

        long lost = 0;
        long doubled = 0;
        Set<WindowKey> keys = new HashSet<>(scenario.truth().keySet());
        keys.addAll(rows.keySet());
        keys.addAll(backfilled.keySet());
        for (WindowKey k : keys) {
            long truth = events(scenario.truth().get(k));
            long counted = events(rows.get(k))
                    + events(backfilled.containsKey(k) ? backfilled.get(k).toMetrics() : null);
            if (counted < truth) {
                lost += truth - counted;
                example(
                        examples,
                        k + ": truth " + truth + " events, stream row " + events(rows.get(k)) + " + backfill "
                                + (counted - events(rows.get(k))));
            } else if (counted > truth) {
                doubled += counted - truth;
                example(
                        examples,
                        k + ": truth " + truth + " events, counted " + counted + " (stream row "
                                + events(rows.get(k)) + " + backfill " + (counted - events(rows.get(k))) + ")"
                                + backfillDetail(backfillByKey.getOrDefault(k, List.of())));
            } else if (!sameSums(k, rows.get(k), backfilled.get(k))) {
                // Same number of events but other ones: one lost and one doubled at least.
                lost++;
                doubled++;
                example(examples, k + ": events add up, other metrics do not");
            }
        }

        Map<String, Long> deadLetters = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : readCommitted(pipeline.deadLetter)) {
            JsonNode n = JSON.readTree(r.value());
            deadLetters.merge(n.path("reason").asText("?"), 1L, Long::sum);
        }
        long dlLost = 0;
        long dlExtra = 0;
        Set<String> reasons = new HashSet<>(deadLetters.keySet());
        scenario.invalidByReason().keySet().forEach(r -> reasons.add(r.wireName()));
        for (String reason : reasons) {
            long expected = scenario.invalidByReason().entrySet().stream()
                    .filter(e -> e.getKey().wireName().equals(reason))
                    .mapToLong(Map.Entry::getValue)
                    .sum();
            long got = deadLetters.getOrDefault(reason, 0L);
            if (got < expected) dlLost += expected - got;
            if (got > expected) dlExtra += got - expected;
        }
        if (dlLost + dlExtra > 0)
            example(examples, "dead letters by reason " + deadLetters + ", sent " + scenario.invalidByReason());

        long[] lake = checkLake(examples);
        List<String> problems = logProblems();
        problems.addAll(checkLakeLedger());
        long rowEvents = rows.values().stream().mapToLong(WindowMetrics::events).sum();
        String seen = String.format(
                "%,d events in %,d stream rows, %,d on the backfill topic, %,d dead letters",
                rowEvents,
                rows.size(),
                backfillIds.size(),
                deadLetters.values().stream().mapToLong(Long::longValue).sum());
        return new Result(
                lost, doubled, duplicates, unknown, dlLost, dlExtra, lake[0], lake[1], 0, problems, examples, seen);
    }

    /**
     * Where the backfill records of a key came from, and every copy of their ids in the lake, so that a doubled
     * key shows whether a second copy outlived the de-dup horizon or one record was routed both ways.
     */
    private String backfillDetail(List<BackfillRecord> records) {
        StringBuilder s = new StringBuilder();
        String files;
        try {
            files = lakeFileList();
        } catch (IOException e) {
            return "; lake unreadable (" + e.getMessage() + ")";
        }
        for (BackfillRecord b : records) {
            s.append("; backfill ")
                    .append(b.event().eventId)
                    .append(" (event_ts ")
                    .append(Instant.ofEpochMilli(b.event().eventTs))
                    .append(", partition ")
                    .append(b.partition())
                    .append(" offset ")
                    .append(b.offset())
                    .append(", judged at watermark ")
                    .append(Instant.ofEpochMilli(b.watermark()))
                    .append(", lake copies ")
                    .append(lakeCopies(files, b.event().eventId))
                    .append(')');
        }
        return s.toString();
    }

    private static String lakeCopies(String files, String eventId) {
        if (files.isEmpty()) return "none (no lake files)";
        List<String> copies = new ArrayList<>();
        try {
            try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
                    PreparedStatement ps =
                            duck.prepareStatement("SELECT kafka_partition, kafka_offset, record_ts FROM read_parquet(["
                                    + files + "]) WHERE event_id = ? ORDER BY kafka_offset")) {
                ps.setString(1, eventId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        copies.add(rs.getInt(1) + "/" + rs.getLong(2) + " sent " + Instant.ofEpochMilli(rs.getLong(3)));
                    }
                }
            }
        } catch (SQLException e) {
            return "unreadable (" + e.getMessage() + ")";
        }
        return copies.toString();
    }

    /** After backfill range + reconcile: the served view against the truth, key by key. */
    long finalKeysWrong(List<String> examples) throws SQLException {
        Map<WindowKey, WindowMetrics> served = read("window_metrics");
        Set<WindowKey> keys = new HashSet<>(scenario.truth().keySet());
        keys.addAll(served.keySet());
        long wrong = 0;
        for (WindowKey k : keys) {
            if (!java.util.Objects.equals(served.get(k), scenario.truth().get(k))) {
                wrong++;
                example(
                        examples,
                        "window_metrics " + k + " = " + served.get(k) + ", truth "
                                + scenario.truth().get(k));
            }
        }
        return wrong;
    }

    private boolean sameSums(WindowKey k, WindowMetrics row, MetricsAccumulator backfill) {
        MetricsAccumulator sum = new MetricsAccumulator();
        if (row != null) sum.merge(MetricsAccumulator.of(row));
        if (backfill != null) sum.merge(backfill);
        return sum.toMetrics().equals(scenario.truth().get(k));
    }

    private WindowKey key(AdEvent e) {
        return new WindowKey(windows.windowStart(e.eventTs), e.campaignId, e.channelId);
    }

    private static long events(WindowMetrics m) {
        return m == null ? 0 : m.events();
    }

    /** [missing, duplicated]: lake rows by Kafka coordinates against the valid records sent. */
    private long[] checkLake(List<String> examples) throws Exception {
        String list = lakeFileList();
        long rows = 0;
        long distinct = 0;
        long uniqueIds = 0;
        if (!list.isEmpty()) {
            try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
                    Statement s = duck.createStatement()) {
                try (ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)),"
                        + " count(DISTINCT event_id) FROM read_parquet([" + list + "])")) {
                    rs.next();
                    rows = rs.getLong(1);
                    distinct = rs.getLong(2);
                    uniqueIds = rs.getLong(3);
                }
            }
        }
        long duplicated = rows - distinct;
        long missing = Math.max(0, scenario.validRecords() - distinct)
                + Math.max(0, scenario.events().size() - uniqueIds);
        if (missing + duplicated > 0) {
            example(
                    examples,
                    "lake: " + rows + " rows, " + distinct + " distinct records, " + uniqueIds + " event ids; sent "
                            + scenario.validRecords() + " valid records of "
                            + scenario.events().size() + " events");
        }
        return new long[] {missing, duplicated};
    }

    /**
     * What the stream recorded as archived per lake hour (lake_archived_rows) against the rows the lake's files hold
     * in that hour: equal, or the batch layer would refuse a complete lake (more recorded: a count committed twice,
     * or for a checkpoint that failed) or miss a loss (fewer: a count lost). One problem per hour that differs.
     */
    private List<String> checkLakeLedger() throws Exception {
        Map<Long, Long> inLake = new TreeMap<>();
        String list = lakeFileList();
        if (!list.isEmpty()) {
            try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
                    Statement s = duck.createStatement();
                    ResultSet rs = s.executeQuery("SELECT event_ts // " + LakeLayout.HOUR_MILLIS + " * "
                            + LakeLayout.HOUR_MILLIS + " AS hour, count(*) FROM read_parquet([" + list
                            + "]) GROUP BY hour")) {
                while (rs.next()) inLake.put(rs.getLong(1), rs.getLong(2));
            }
        }
        Map<Long, Long> recorded;
        try (Connection c = pipeline.connection()) {
            recorded = LakeArchivedRowsTable.rowsByHour(c, 0, LEDGER_UNTIL);
        }
        List<String> problems = new ArrayList<>();
        TreeSet<Long> hours = new TreeSet<>(inLake.keySet());
        hours.addAll(recorded.keySet());
        for (long hour : hours) {
            long files = inLake.getOrDefault(hour, 0L);
            long counted = recorded.getOrDefault(hour, 0L);
            if (files != counted && problems.size() < 5) {
                problems.add("lake_archived_rows: hour " + Instant.ofEpochMilli(hour) + " recorded " + counted
                        + " rows, its files hold " + files);
            }
        }
        return problems;
    }

    /** The lake's committed Parquet files as a DuckDB list literal's items; empty when there are none. */
    private String lakeFileList() throws IOException {
        List<String> files = new ArrayList<>();
        Path lake = pipeline.dir.resolve("lake");
        if (Files.exists(lake)) {
            try (var s = Files.walk(lake)) {
                // In-progress and pending part files are hidden (a leading dot): never part of the lake.
                s.filter(Files::isRegularFile)
                        .filter(p -> !p.getFileName().toString().startsWith("."))
                        .filter(p -> p.getFileName().toString().endsWith(".parquet"))
                        .forEach(p -> files.add("'" + p.toString().replace("'", "''") + "'"));
            }
        }
        return String.join(",", files);
    }

    private List<String> logProblems() throws IOException {
        List<String> problems = new ArrayList<>();
        for (String line : pipeline.streamLogs().split("\\R")) {
            Matcher m = BAD_LOG.matcher(line);
            if (m.find() && problems.size() < 5) problems.add(line.strip());
        }
        return problems;
    }

    private Map<WindowKey, WindowMetrics> read(String relation) throws SQLException {
        Map<WindowKey, WindowMetrics> rows = new HashMap<>();
        try (Connection c = pipeline.connection();
                PreparedStatement ps = c.prepareStatement("SELECT * FROM " + relation);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.put(
                        new WindowKey(
                                Timestamps.read(rs, "window_start"),
                                rs.getString("campaign_id"),
                                rs.getString("channel_id")),
                        MetricColumns.read(rs));
            }
        }
        return rows;
    }

    List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic) {
        return Topics.readCommitted(bootstrapServers, topic, Duration.ofMinutes(2));
    }

    private static void example(List<String> examples, String text) {
        if (examples.size() < 8) examples.add(text);
    }
}
