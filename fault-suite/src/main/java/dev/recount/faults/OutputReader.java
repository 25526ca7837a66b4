package dev.recount.faults;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.Timestamps;
import dev.recount.faults.Outputs.LakeRow;
import dev.recount.faults.Outputs.TopicRecord;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.Key;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.SetTruth;
import java.io.IOException;
import java.io.Reader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Reads a pipeline's outputs into the judge's data ({@link Outputs}), and what was sent ({@link Sent}): the topics
 * with isolation.level=read_committed (as recount's consumers read them), every set's tables and views as the
 * administrator, the lake's committed Parquet files with DuckDB (no Spark, no recount reader). Nothing is compared
 * here.
 */
final class OutputReader {
    private static final Duration TOPIC_TIMEOUT = Duration.ofMinutes(2);
    /** Past every event a round sends: the end of the ledger's range. */
    private static final long LEDGER_UNTIL =
            Instant.parse("2100-01-01T00:00:00Z").toEpochMilli();

    private final Pipeline pipeline;
    private final String bootstrapServers;

    OutputReader(Pipeline pipeline, String bootstrapServers) {
        this.pipeline = pipeline;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * The input topic judged by the oracle, with the settings and metric sets the pipeline runs with, read from its
     * own files by the oracle's own readers.
     */
    Sent sent() throws IOException {
        OracleSettings settings;
        try (Reader r = Files.newBufferedReader(pipeline.config, StandardCharsets.UTF_8)) {
            Properties p = new Properties();
            p.load(r);
            settings = OracleSettings.fromProperties(p);
        }
        Definitions definitions =
                Definitions.parse(Files.readString(pipeline.metricSets, StandardCharsets.UTF_8), settings);
        return Sent.judge(input(), definitions, settings);
    }

    /** Every record of the input topic. */
    List<Sent.InputRecord> input() {
        List<Sent.InputRecord> records = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : read(pipeline.input)) {
            records.add(new Sent.InputRecord(
                    new Coordinates(r.topic(), r.partition(), r.offset()), r.timestamp(), r.value()));
        }
        return records;
    }

    List<TopicRecord> backfill() {
        return topicRecords(pipeline.backfill);
    }

    List<TopicRecord> deadLetters() {
        return topicRecords(pipeline.deadLetter);
    }

    /** What the stream wrote, after it drained: its rows of every set of {@code sent}, both topics, the lake, logs. */
    Outputs.AfterDrain afterDrain(Sent sent) throws Exception {
        Map<String, SortedMap<Key, List<BigInteger>>> stream = new LinkedHashMap<>();
        Map<Long, Long> archived;
        try (Connection c = pipeline.connection()) {
            for (SetTruth truth : sent.truth().sets()) {
                stream.put(
                        truth.name(),
                        rows(
                                c,
                                tables(truth.name()).streamWindowMetrics(),
                                truth.set(),
                                truth.set().measureNames()));
            }
            archived = LakeArchivedRowsTable.rowsByHour(c, 0, LEDGER_UNTIL);
        }
        return new Outputs.AfterDrain(stream, backfill(), deadLetters(), lake(), archived, pipeline.streamLogs());
    }

    /** Every set's serving view, and its attribution view where the set has attribution. */
    Outputs.Served served(Sent sent) throws SQLException {
        Map<String, SortedMap<Key, List<BigInteger>>> windows = new LinkedHashMap<>();
        Map<String, SortedMap<Key, List<BigInteger>>> attribution = new LinkedHashMap<>();
        try (Connection c = pipeline.connection()) {
            for (SetTruth truth : sent.truth().sets()) {
                SetTables tables = tables(truth.name());
                windows.put(
                        truth.name(),
                        rows(c, tables.windowMetrics(), truth.set(), truth.set().measureNames()));
                if (truth.attribution() != null) {
                    attribution.put(
                            truth.name(),
                            rows(c, tables.attributionMetrics(), truth.set(), SetTruth.ATTRIBUTION_COLUMNS));
                }
            }
        }
        return new Outputs.Served(windows, attribution);
    }

    /**
     * Every column of every row of every set's serving views (window_metrics, and attribution_metrics where the set
     * has attribution), ordered by key, as text: equal before and after a step that must change nothing served.
     */
    String servedSnapshot(Sent sent) throws SQLException {
        StringBuilder b = new StringBuilder();
        try (Connection c = pipeline.connection()) {
            for (SetTruth truth : sent.truth().sets()) {
                SetTables tables = tables(truth.name());
                List<String> views = new ArrayList<>(List.of(tables.windowMetrics()));
                if (truth.attribution() != null) views.add(tables.attributionMetrics());
                for (String view : views) {
                    b.append(view).append('\n');
                    try (Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("SELECT * FROM " + view + " ORDER BY window_start, "
                                    + String.join(", ", truth.set().dimensions()))) {
                        int columns = rs.getMetaData().getColumnCount();
                        while (rs.next()) {
                            for (int i = 1; i <= columns; i++)
                                b.append(rs.getString(i)).append(i == columns ? '\n' : ',');
                        }
                    }
                }
            }
        }
        return b.toString();
    }

    /** The names of a set's objects, from the same file the pipeline runs with. */
    private SetTables tables(String set) {
        MetricSets sets = MetricSets.fromConfig(RecountConfig.load(pipeline.config, Map.of()));
        MetricSet s = sets.set(set)
                .orElseThrow(() -> new IllegalStateException(
                        "recount does not read set " + set + " from " + pipeline.metricSets + " as the oracle does"));
        return new SetTables(s);
    }

    /** A relation's rows by key: {@code columns} in that order, exact. */
    private static SortedMap<Key, List<BigInteger>> rows(
            Connection c, String relation, Definitions.MetricSet set, List<String> columns) throws SQLException {
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM " + relation)) {
            while (rs.next()) {
                List<String> dimensions = new ArrayList<>();
                for (String d : set.dimensions()) dimensions.add(rs.getString(d));
                List<BigInteger> values = new ArrayList<>();
                for (String m : columns) values.add(rs.getBigDecimal(m).toBigIntegerExact());
                Key key = new Key(Timestamps.read(rs, "window_start"), dimensions);
                if (out.put(key, values) != null)
                    throw new IllegalStateException(relation + " holds key " + Accounting.describe(key) + " twice");
            }
        }
        return out;
    }

    /** Every row of the lake's committed files (in-progress and pending part files are hidden: never the lake's). */
    List<LakeRow> lake() throws IOException, SQLException {
        String files = lakeFileList();
        List<LakeRow> rows = new ArrayList<>();
        if (files.isEmpty()) return rows;
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = duck.createStatement();
                ResultSet rs = s.executeQuery("SELECT kafka_topic, kafka_partition, kafka_offset, event_id, event_type,"
                        + " event_ts, campaign_id, channel_id, cost_micros, record_ts, request_id, attributes"
                        + " FROM read_parquet([" + files + "], union_by_name = true)")) {
            while (rs.next()) {
                rows.add(new LakeRow(
                        new Coordinates(rs.getString(1), rs.getInt(2), rs.getLong(3)),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getLong(6),
                        rs.getString(7),
                        rs.getString(8),
                        rs.getLong(9),
                        rs.getLong(10),
                        rs.getString(11),
                        rs.getString(12)));
            }
        }
        return rows;
    }

    /** The lake's committed Parquet files as a DuckDB list literal's items; empty when there are none. */
    private String lakeFileList() throws IOException {
        List<String> files = new ArrayList<>();
        Path lake = pipeline.dir.resolve("lake");
        if (Files.exists(lake)) {
            try (var s = Files.walk(lake)) {
                s.filter(Files::isRegularFile)
                        .filter(p -> !p.getFileName().toString().startsWith("."))
                        .filter(p -> p.getFileName().toString().endsWith(".parquet"))
                        .sorted()
                        .forEach(p -> files.add("'" + p.toString().replace("'", "''") + "'"));
            }
        }
        return String.join(",", files);
    }

    private List<TopicRecord> topicRecords(String topic) {
        List<TopicRecord> records = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : read(topic)) {
            records.add(new TopicRecord(new Coordinates(r.topic(), r.partition(), r.offset()), r.value()));
        }
        return records;
    }

    private List<ConsumerRecord<byte[], byte[]>> read(String topic) {
        return KafkaTopics.readCommitted(bootstrapServers, topic, TOPIC_TIMEOUT);
    }
}
