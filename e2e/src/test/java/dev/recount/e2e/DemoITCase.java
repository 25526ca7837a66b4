package dev.recount.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.EventReader;
import dev.recount.oracle.Key;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.SetCounter;
import dev.recount.oracle.SetTruth;
import dev.recount.oracle.Truth;
import dev.recount.testkit.LocalStack;
import dev.recount.testkit.Topics;
import java.io.Reader;
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
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's acceptance test: {@code ./recount demo} at reduced size, run exactly as a user runs it (the launcher; the
 * stream job, Spark and the reconciler each in their own JVM), then checked, for every metric set the demo declares,
 * against the oracle's truth. The oracle ({@code dev.recount.oracle}, which shares no code with the pipeline) reads
 * the records on the input topic itself, with the demo's own settings and metric-sets file:
 * <ul>
 *   <li>after reconciliation every set's serving view ({@code window_metrics}, {@code <set>__window_metrics}) equals
 *       the truth key by key, final, and so does attribution where the set has it;</li>
 *   <li>the dead-letter topic holds exactly the records the oracle finds invalid, each with its reason;</li>
 *   <li>every unique valid event is accounted for exactly once per set: in the set's stream rows or on the backfill
 *       topic for that set, never both, never neither: per key and measure, stream + backfill = truth.</li>
 * </ul>
 */
class DemoITCase {
    static final Instant START = Instant.parse("2026-11-29T10:00:00Z");
    static final Duration SPAN = Duration.ofMinutes(3);
    /**
     * What the demo reconciles: its three minutes widened to whole windows of its longest set (campaign_slot's five
     * minutes).
     */
    static final Instant END = START.plus(Duration.ofMinutes(5));

    static final String INPUT = "demo-ad-events";
    static final ObjectMapper JSON = new ObjectMapper();

    static Path home;
    static LocalStack stack;
    static String output;
    static Definitions definitions;
    static OracleSettings settings;
    /** The oracle's truth of every record on the input topic. */
    static Truth truth;
    /** Its verdict of each record, by "partition/offset". */
    static Map<String, Oracle.Verdict> verdicts;

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
                        Long.toString(SPAN.toMinutes()) + "m",
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
        truth = oracleOfTheInputTopic();
    }

    /** The demo's own settings file names its settings and its metric-sets file: the oracle reads both itself. */
    static Truth oracleOfTheInputTopic() throws Exception {
        Properties demoSettings = new Properties();
        try (Reader r = Files.newBufferedReader(home.resolve("demo/demo.properties"), StandardCharsets.UTF_8)) {
            demoSettings.load(r);
        }
        settings = OracleSettings.fromProperties(demoSettings);
        definitions =
                Definitions.parse(Files.readString(Path.of(demoSettings.getProperty("metric-sets.file"))), settings);
        Oracle oracle = new Oracle(definitions, settings);
        verdicts = new TreeMap<>();
        // Send order: the generator sends in arrival order and stamps each record with it; within a partition, by
        // offset. (Copies of an event share its key, so its partition: the first copy is the first one read.)
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>(readTopic(INPUT));
        records.sort(Comparator.comparingLong((ConsumerRecord<byte[], byte[]> r) -> r.timestamp())
                .thenComparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        for (ConsumerRecord<byte[], byte[]> r : records) {
            verdicts.put(r.partition() + "/" + r.offset(), oracle.accept(r.value(), r.timestamp()));
        }
        return oracle.truth();
    }

    @AfterAll
    static void stopStack() {
        if (stack != null) stack.stop();
    }

    @Test
    void declaresThreeSets() {
        assertThat(definitions.names()).containsExactly("default", "campaign_slot", "channel_country");
        assertThat(definitions.set("campaign_slot").windowMillis())
                .isEqualTo(Duration.ofMinutes(5).toMillis());
        assertThat(output).contains("reconcile [" + START + ", " + END + ")");
    }

    /** One `correct` run, before the range backfill: the windows the too-late events named are final already. */
    @Test
    void correctMakesTheLateWindowsFinalBeforeTheRangeBackfill() {
        Matcher m = Pattern.compile("window keys final with their too-late events counted: (\\d+) in window_metrics")
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
    void printsTheSummaryAUserNeedsPerSet() {
        assertThat(output)
                .contains("[8/8] reconcile")
                .contains("recount demo: summary")
                .contains("dead-letter records")
                .contains("late re-firings")
                .contains("too-late events")
                .contains("report.html")
                .contains("Flink Web UI")
                .containsPattern("verdict +final == truth for every set \\(3\\)");
        for (String set : definitions.names()) {
            assertThat(output).contains("set " + set).contains("truth (oracle)");
        }
        assertThat(output).contains("final (campaign_slot__window_metrics)").contains("attribution (2m)");
        assertThat(Pattern.compile("final == truth +yes, every key and value")
                        .matcher(output)
                        .results())
                .hasSize(3);
        // The closing hint works as printed: this stack's own env file (it stays up: the test started it), no
        // placeholders.
        assertThat(output)
                .contains(". " + home.toAbsolutePath().normalize().resolve("local.env") + " && psql -c")
                .doesNotContain("<home>")
                .doesNotContain("pkill");
    }

    /** The demo judged the records it sent as the oracle judges the topic: same truth, set by set. */
    @Test
    void theDemosTruthIsTheTruthOfWhatIsOnTheInputTopic() throws Exception {
        for (SetTruth s : truth.sets()) {
            assertThat(Files.readString(home.resolve("demo/truth/" + s.name() + ".csv")))
                    .as(s.name())
                    .isEqualTo(s.csv());
        }
    }

    @Test
    void everySetsServingViewEqualsTheOracleForEveryKey() throws Exception {
        for (Definitions.MetricSet set : definitions.sets()) {
            SetTruth want = truth.set(set.name()).within(START.toEpochMilli(), END.toEpochMilli());
            SortedMap<Key, List<BigInteger>> served =
                    rows(relation(set, "window_metrics"), set.dimensions(), set.measureNames(), true);
            assertThat(want.rows()).as(set.name()).hasSizeGreaterThan(5);
            assertThat(served).as(set.name()).containsExactlyEntriesOf(want.rows());
        }
    }

    /**
     * Stream and batch on the same data, per set: the batch layer's rows are the truth itself, and the stream's rows
     * differ from them only by the events the stream sent to the backfill topic for that set (the test below counts
     * them), never by a key the batch lacks.
     */
    @Test
    void everySetsBatchRowsEqualTheOracleAndCoverEveryStreamKey() throws Exception {
        for (Definitions.MetricSet set : definitions.sets()) {
            SetTruth want = truth.set(set.name()).within(START.toEpochMilli(), END.toEpochMilli());
            SortedMap<Key, List<BigInteger>> batch =
                    rows(relation(set, "batch_window_metrics"), set.dimensions(), set.measureNames(), false);
            SortedMap<Key, List<BigInteger>> stream =
                    rows(relation(set, "stream_window_metrics"), set.dimensions(), set.measureNames(), false);
            assertThat(batch).as(set.name() + ": batch").containsExactlyEntriesOf(want.rows());
            assertThat(batch.keySet()).as(set.name() + ": every stream key").containsAll(stream.keySet());
        }
    }

    @Test
    void attributionAsServedEqualsTheOracleForEverySetThatHasIt() throws Exception {
        List<String> withAttribution = new ArrayList<>();
        for (Definitions.MetricSet set : definitions.sets()) {
            if (!set.attribution()) continue;
            withAttribution.add(set.name());
            SetTruth want = truth.set(set.name()).within(START.toEpochMilli(), END.toEpochMilli());
            List<BigInteger> totals = want.attributionTotals();
            assertThat(totals.get(0)).as(set.name() + ": attributed clicks").isPositive();
            assertThat(totals.get(2)).as(set.name() + ": unattributed clicks").isPositive();
            SortedMap<Key, List<BigInteger>> served =
                    rows(relation(set, "attribution_metrics"), set.dimensions(), SetTruth.ATTRIBUTION_COLUMNS, true);
            assertThat(served).as(set.name()).containsExactlyEntriesOf(want.attribution());
        }
        assertThat(withAttribution).containsExactly("default", "channel_country");
    }

    @Test
    void deadLetterTopicHoldsExactlyTheRecordsTheOracleFindsInvalid() throws Exception {
        Map<String, String> expected = new TreeMap<>();
        verdicts.forEach((at, v) -> {
            if (v.isInvalid()) expected.put(at, v.reason());
        });
        Map<String, String> got = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : readTopic("demo-ad-events-dlq")) {
            JsonNode dl = JSON.readTree(r.value());
            assertThat(dl.has("detail") && dl.has("record_ts") && dl.has("raw"))
                    .as(dl.toString())
                    .isTrue();
            assertThat(dl.get("topic").asText()).isEqualTo(INPUT);
            String at = dl.get("partition").asInt() + "/" + dl.get("offset").asLong();
            assertThat(got.put(at, dl.get("reason").asText()))
                    .as("dead letter twice: " + at)
                    .isNull();
        }
        assertThat(new HashSet<>(expected.values())).containsExactlyInAnyOrder("malformed", "schema", "timestamp");
        assertThat(got).containsExactlyEntriesOf(expected);
    }

    @Test
    void everyUniqueValidEventIsCountedOncePerSetInItsStreamRowsOrOnTheBackfillTopic() throws Exception {
        Map<String, SetCounter> tooLate = new TreeMap<>();
        for (Definitions.MetricSet set : definitions.sets()) tooLate.put(set.name(), new SetCounter(set));
        EventReader reader = new EventReader(definitions.attributes(), settings);
        Set<String> ids = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : readTopic("demo-ad-events-late")) {
            JsonNode record = JSON.readTree(r.value());
            JsonNode event = record.get("event");
            // Judged at its own event time: only the rules of its content apply.
            EventReader.Reading reading = reader.read(
                    JSON.writeValueAsBytes(event), event.get("event_ts").asLong());
            assertThat(reading.isValid()).as(event.toString()).isTrue();
            assertThat(ids.add(reading.event().eventId()))
                    .as("event %s on the backfill topic twice", reading.event().eventId())
                    .isTrue();
            for (JsonNode named : record.get("sets")) {
                SetCounter counter = tooLate.get(named.get("set").asText());
                assertThat(counter).as("a set the demo declares: " + named).isNotNull();
                Key key = counter.keyOf(reading.event());
                assertThat(named.get("window_start").asLong())
                        .as(named.toString())
                        .isEqualTo(key.windowStart());
                assertThat(record.get("watermark").asLong())
                        .isGreaterThanOrEqualTo(named.get("window_end").asLong() - 1);
                counter.add(reading.event());
            }
        }
        assertThat(ids)
                .as("the generator sends ~1%% too-late events; some must reach the backfill topic")
                .isNotEmpty();
        for (Definitions.MetricSet set : definitions.sets()) {
            SortedMap<Key, List<BigInteger>> accounted =
                    rows(relation(set, "stream_window_metrics"), set.dimensions(), set.measureNames(), false);
            tooLate.get(set.name()).rows().forEach((k, v) -> {
                if (k.windowStart() >= START.toEpochMilli() && k.windowStart() < END.toEpochMilli()) {
                    accounted.merge(k, v, DemoITCase::plus);
                }
            });
            assertThat(accounted)
                    .as(set.name())
                    .containsExactlyEntriesOf(truth.set(set.name())
                            .within(START.toEpochMilli(), END.toEpochMilli())
                            .rows());
        }
    }

    /** A set's object: the default set's keeps today's name, every other set's is {@code <set>__<name>}. */
    static String relation(Definitions.MetricSet set, String base) {
        return set.name().equals(Definitions.DEFAULT) ? base : set.name() + "__" + base;
    }

    /** The rows of {@code relation} in the demo's range, by key; with {@code mustBeFinal}, each must be final. */
    static SortedMap<Key, List<BigInteger>> rows(
            String relation, List<String> dimensions, List<String> columns, boolean mustBeFinal) throws SQLException {
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        try (Connection c = demoSchema();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT * FROM " + relation + " WHERE window_start >= ? AND window_start < ?")) {
            ps.setObject(1, OffsetDateTime.ofInstant(START, ZoneOffset.UTC));
            ps.setObject(2, OffsetDateTime.ofInstant(END, ZoneOffset.UTC));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (mustBeFinal)
                        assertThat(rs.getBoolean("is_final")).as(relation).isTrue();
                    List<String> dims = new ArrayList<>();
                    for (String d : dimensions) dims.add(rs.getString(d));
                    List<BigInteger> values = new ArrayList<>();
                    for (String m : columns) values.add(rs.getBigDecimal(m).toBigIntegerExact());
                    Key key = new Key(
                            rs.getObject("window_start", OffsetDateTime.class)
                                    .toInstant()
                                    .toEpochMilli(),
                            dims);
                    assertThat(out.put(key, values))
                            .as(relation + " holds a key twice")
                            .isNull();
                }
            }
        }
        return out;
    }

    static List<BigInteger> plus(List<BigInteger> a, List<BigInteger> b) {
        List<BigInteger> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) out.add(a.get(i).add(b.get(i)));
        return out;
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
