package dev.recount.stream;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.W3;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.DeadLetterRecord;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.run.RunningJob;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.testutils.FlinkCluster;
import dev.recount.stream.testutils.LakeFiles;
import dev.recount.stream.testutils.StreamTestStack;
import dev.recount.testkit.Poll;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole job on a real Kafka broker and PostgreSQL (Flink MiniCluster in this JVM), driven by a scripted stream
 * in phases. Each phase waits for an effect that proves how far the watermark has got, so which events are on time,
 * late or too late does not depend on timing.
 *
 * <p>Partition 1 gets one event and then goes quiet: the windows still close (idleness).
 *
 * <p>Two metric sets from a definitions file: the default set (1 min windows) and {@value #BY_CHANNEL} (per channel,
 * 5 min windows), into its own table; the too-late event of the default set is on time for it.
 */
class StreamJobITCase {
    @RegisterExtension
    static final FlinkCluster FLINK = new FlinkCluster(2);

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long FIVE_QUINTILLION = 5_000_000_000_000_000_000L;

    static final String BY_CHANNEL = "by_channel";
    static final String DEFINITIONS = """
            version: 1
            sets:
              - name: default
              - name: by_channel
                dimensions: [channel_id]
                measures:
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                window: 5m
            """;

    private final StreamTestStack stack = new StreamTestStack();
    private final Map<String, Long> validOffsets = new HashMap<>(); // "partition:offset" -> event_ts
    /** The invalid record with a 700 KB key whose dead letter would exceed Kafka's 1 MiB limit uncut. */
    private long hugeKeyOffset = -1;

    private KafkaProducer<byte[], byte[]> producer;
    private String input;
    private StreamTestStack.Job job;

    @Test
    void scriptedStream(@TempDir Path home) throws Exception {
        // As a broker before Kafka 4.0 does by default: any record timestamp is accepted, even one near 2^63.
        input = stack.createTopic("input", 2, Map.of("message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE)));
        // The largest cost a user may allow per event, so one window's spend can exceed a 64-bit integer.
        job = stack.newJob(
                input,
                home,
                Map.of(
                        "window.size",
                        "1m",
                        "watermark.out-of-orderness",
                        "5s",
                        "window.allowed-lateness",
                        "1m",
                        "watermark.idleness",
                        "1s",
                        "stream.parallelism",
                        "2",
                        "validation.max-cost-micros",
                        Long.toString(Long.MAX_VALUE)),
                DEFINITIONS);
        producer = stack.producer();
        RunningJob running = StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {});
        try {
            // Phase 1: on-time events, duplicates and every kind of invalid record; p1 speaks once, then is quiet.
            event(1, "idle-1", EventType.IMPRESSION, W0.plusSeconds(5), "camp-a", "search", 1_000);
            event(1, "i2", EventType.IMPRESSION, W0.plusSeconds(4), "camp-b", "display", 1_000); // dup of p0's i2
            event(0, "i1", EventType.IMPRESSION, W0.plusSeconds(1), "camp-a", "search", 1_000);
            event(0, "c1", EventType.CLICK, W0.plusSeconds(2), "camp-a", "search", 250_000);
            event(0, "v1", EventType.CONVERSION, W0.plusSeconds(3), "camp-a", "search", 5_000_000);
            event(0, "i2", EventType.IMPRESSION, W0.plusSeconds(4), "camp-b", "display", 1_000);
            event(0, "c1", EventType.CLICK, W0.plusSeconds(2), "camp-a", "search", 250_000);
            // Spend beyond a long: two conversions of 5e18 micros (each a valid cost) in one window.
            event(0, "big-1", EventType.CONVERSION, W0.plusSeconds(7), "camp-big", "search", FIVE_QUINTILLION);
            event(0, "big-2", EventType.CONVERSION, W0.plusSeconds(8), "camp-big", "search", FIVE_QUINTILLION);
            Map<Long, String> invalidReasons = sendInvalidRecords(W0.plusSeconds(6));
            event(0, "a1", EventType.IMPRESSION, W1.plusSeconds(10), "camp-a", "search", 1_000); // moves p0 past W0

            Row w0 = awaitRow(key(W0, "camp-a", "search"), 1);
            assertThat(w0.window().values()).isEqualTo(Fixtures.defaultValues(2, 1, 1, 5_252_000, 4));
            assertThat(awaitRow(key(W0, "camp-b", "display"), 1).window().values())
                    .isEqualTo(Fixtures.defaultValues(1, 0, 0, 1_000, 1));
            assertThat(awaitRow(key(W0, "camp-big", "search"), 1))
                    .isEqualTo(row(
                            W0,
                            "camp-big",
                            "search",
                            1,
                            Fixtures.defaultValues(0, 0, 2, new BigInteger("10000000000000000000"), 2)));

            // Phase 2: within allowed lateness W0 fires again with full totals; the duplicate counts nothing.
            event(0, "late-1", EventType.CLICK, W0.plusSeconds(30), "camp-a", "search", 100);
            event(0, "c1", EventType.CLICK, W0.plusSeconds(2), "camp-a", "search", 250_000);
            assertThat(awaitRow(key(W0, "camp-a", "search"), 2).window().values())
                    .isEqualTo(Fixtures.defaultValues(2, 2, 1, 5_252_100, 5));

            // Phase 3: move event time on until W2 has fired, so W0 is surely past its lateness; then a too-late event.
            event(0, "b1", EventType.IMPRESSION, W2.plusSeconds(30), "camp-a", "search", 1_000);
            event(0, "b2", EventType.IMPRESSION, W3.plusSeconds(10), "camp-a", "search", 1_000);
            awaitRow(key(W2, "camp-a", "search"), 1);
            AdEvent tooLate = event(0, "too-late-1", EventType.CLICK, W0.plusSeconds(40), "camp-a", "search", 777);

            List<BackfillRecord> backfill = Poll.untilPresent(WAIT, "the too-late event on the backfill topic", () -> {
                List<BackfillRecord> r = stack
                        .readCommitted(job.settings().topics().backfill())
                        .stream()
                        .map(c -> BackfillRecord.fromJson(new String(c.value(), StandardCharsets.UTF_8)))
                        .toList();
                return r.isEmpty() ? Optional.empty() : Optional.of(r);
            });
            assertThat(backfill).hasSize(1);
            BackfillRecord b = backfill.get(0);
            assertThat(b.setNames()).as("on time for by_channel's 5 min window").containsExactly("default");
            assertThat(b.event().eventId).isEqualTo("too-late-1");
            assertThat(b.event().costMicros).isEqualTo(777);
            assertThat(b.windowStart()).isEqualTo(ms(W0));
            assertThat(b.windowEnd()).isEqualTo(ms(W1));
            assertThat(b.watermark()).isGreaterThanOrEqualTo(ms(W2) - 1);
            assertThat(b.partition()).isEqualTo(0);
            assertThat(b.offset()).isEqualTo(tooLate.offset);

            // The job's own totals (accumulators, read while it runs).
            String expectedTotals =
                    "valid events 15; invalid 14 (malformed 6, schema 6, timestamp 2); duplicates dropped 3; "
                            + "too late 1; window firings 6 (late re-firings 1)";
            java.util.concurrent.atomic.AtomicReference<String> lastTotals =
                    new java.util.concurrent.atomic.AtomicReference<>();
            try {
                Poll.until(WAIT, "the job's totals", () -> {
                    lastTotals.set(JobTotals.summary(running.totals()));
                    return expectedTotals.equals(lastTotals.get());
                });
            } catch (AssertionError e) {
                throw new AssertionError(
                        e.getMessage() + "; last seen: " + lastTotals.get() + "; backfill: "
                                + stack.readCommitted(job.settings().topics().backfill()).stream()
                                        .map(c -> new String(c.value(), StandardCharsets.UTF_8))
                                        .toList()
                                + "; rows: " + stack.windowRows(job),
                        e);
            }

            // The stream's rows: W0 stayed at revision 2, W1 and W2 fired once.
            Poll.until(WAIT, "W1 and W2 rows", () -> stack.windowRows(job).size() == 5);
            Map<WindowKey, Row> rows = stack.windowRows(job).stream()
                    .collect(Collectors.toMap(r -> r.window().key(), r -> r));
            assertThat(rows.get(key(W0, "camp-a", "search")).revision()).isEqualTo(2);
            assertThat(rows.get(key(W1, "camp-a", "search")))
                    .isEqualTo(row(W1, "camp-a", "search", 1, Fixtures.defaultValues(1, 0, 0, 1_000, 1)));
            assertThat(rows.get(key(W2, "camp-a", "search")))
                    .isEqualTo(row(W2, "camp-a", "search", 1, Fixtures.defaultValues(1, 0, 0, 1_000, 1)));

            // Dead letters: one per invalid record, with its reason and coordinates, exactly once.
            List<ConsumerRecord<byte[], byte[]>> dead =
                    stack.readCommitted(job.settings().topics().deadLetter());
            Map<Long, String> deadReasons = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> d : dead) {
                JsonNode n = JSON.readTree(d.value());
                assertThat(n.get("topic").asText()).isEqualTo(input);
                assertThat(n.get("partition").asInt()).isZero();
                assertThat(n.has("detail") && n.has("raw") && n.has("record_ts"))
                        .isTrue();
                deadReasons.put(n.get("offset").asLong(), n.get("reason").asText());
                if (n.get("offset").asLong() == hugeKeyOffset) {
                    assertThat(d.key()).hasSize(DeadLetterRecord.MAX_KEY_BYTES);
                    assertThat(n.get("key_truncated").asBoolean()).isTrue();
                    assertThat(n.get("key_bytes").asInt()).isEqualTo(700_000);
                } else {
                    assertThat(d.key()).isEqualTo("camp-a".getBytes(StandardCharsets.UTF_8));
                }
            }
            assertThat(dead).hasSize(invalidReasons.size());
            assertThat(deadReasons).isEqualTo(invalidReasons);

            // The lake: every valid record (duplicates, late and too-late ones too) exactly once, in its hour.
            Poll.until(
                    WAIT,
                    "every valid record in the lake",
                    () -> LakeFiles.read(job.lake()).size() >= validOffsets.size());
            List<LakeFiles.LakeRow> lake = LakeFiles.read(job.lake());
            Map<String, Long> lakeOffsets = new HashMap<>();
            for (LakeFiles.LakeRow r : lake) {
                String coordinates = r.get(LakeLayout.KAFKA_PARTITION) + ":" + r.get(LakeLayout.KAFKA_OFFSET);
                assertThat(lakeOffsets.put(coordinates, Long.parseLong(r.get(LakeLayout.EVENT_TS))))
                        .as("lake row %s once", coordinates)
                        .isNull();
                assertThat(r.get(LakeLayout.KAFKA_TOPIC)).isEqualTo(input);
                assertThat(r.partitionPath())
                        .isEqualTo(LakeLayout.partitionPath(Long.parseLong(r.get(LakeLayout.EVENT_TS))));
            }
            assertThat(lakeOffsets).isEqualTo(validOffsets);
            // And the job recorded, per hour, as many archived rows as the lake holds: the lake's files and these
            // counts commit with the same checkpoints, each on its own, so the counts may trail for a moment.
            java.util.SortedMap<Long, Long> lakeRowsByHour = LakeFiles.rowsByHour(job.lake());
            Poll.until(
                    WAIT,
                    "lake_archived_rows equal to the lake, hour by hour",
                    () -> stack.lakeArchivedRows(job).equals(lakeRowsByHour));

            // How far the lake is complete: recorded, one checkpoint behind the watermark.
            long progress = Poll.untilPresent(
                    WAIT, "stream_progress", () -> stack.lakeCompleteUntil(job).filter(t -> t >= ms(W2)));
            assertThat(progress).isLessThan(ms(W3.plusSeconds(10)));

            // Phase 4: past W5, by_channel's first window fires: every unique event of W0-W4 per channel, the too-late
            // one of the default set included, in its own table.
            event(0, "c-w5", EventType.IMPRESSION, W0.plusSeconds(5 * 60 + 10), "camp-a", "search", 1_000);
            MetricSet byChannel = job.settings().sets().set(BY_CHANNEL).orElseThrow();
            List<Row> channelRows = Poll.untilPresent(WAIT, "by_channel's first window", () -> {
                List<Row> r = stack.windowRows(job, byChannel);
                return r.size() == 2 ? Optional.of(r) : Optional.empty();
            });
            long w5 = ms(W0) + 5 * 60_000;
            assertThat(channelRows)
                    .containsExactlyInAnyOrder(
                            new Row(
                                    new dev.recount.db.tables.WindowRow(
                                            WindowKey.of(ms(W0), "search"),
                                            w5,
                                            MeasureValues.of(3, 0, 11)
                                                    .plus(new MeasureValues(
                                                            BigInteger.ZERO,
                                                            new BigInteger("10000000000005255877"),
                                                            BigInteger.ZERO))),
                                    1),
                            new Row(
                                    new dev.recount.db.tables.WindowRow(
                                            WindowKey.of(ms(W0), "display"), w5, MeasureValues.of(0, 1_000, 1)),
                                    1));

            // Nothing above made the job fail over: every task still runs its first attempt.
            AccessExecutionGraph graph =
                    FLINK.miniCluster().getExecutionGraph(running.jobId()).get();
            for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
                assertThat(v.getCurrentExecutionAttempt().getAttemptNumber())
                        .as(v.getTaskNameWithSubtaskIndex())
                        .isZero();
            }
        } finally {
            producer.close();
            running.client().cancel().get();
        }
    }

    /** Sends every class of invalid record to partition 0; returns offset -> expected dead-letter reason. */
    private Map<Long, String> sendInvalidRecords(Instant recordTime) {
        long recordTs = ms(recordTime);
        String valid = EventJson.toJson(
                new AdEvent("x1", EventType.CLICK, recordTs - 1_000, "camp-a", "search", 1, null, 0, 0, 0));
        byte[] huge = new byte[1_000_000];
        Arrays.fill(huge, (byte) '{');
        Map<Long, String> reasons = new HashMap<>();
        List<Object[]> cases = new ArrayList<>();
        cases.add(new Object[] {"{not json".getBytes(StandardCharsets.UTF_8), "malformed"});
        cases.add(new Object[] {"[1,2,3]".getBytes(StandardCharsets.UTF_8), "malformed"});
        cases.add(new Object[] {null, "malformed"});
        cases.add(new Object[] {new byte[] {(byte) 0xff, (byte) 0xfe, '{', '}'}, "malformed"});
        cases.add(new Object[] {huge, "malformed"});
        cases.add(new Object[] {valid.replace("\"event_id\":\"x1\",", "").getBytes(StandardCharsets.UTF_8), "schema"});
        cases.add(new Object[] {
            valid.replace("\"event_id\":\"x1\"", "\"event_id\":\"\"").getBytes(StandardCharsets.UTF_8), "schema"
        });
        cases.add(new Object[] {
            valid.replace("\"cost_micros\":1", "\"cost_micros\":\"1\"").getBytes(StandardCharsets.UTF_8), "schema"
        });
        cases.add(new Object[] {valid.replace("\"click\"", "\"tap\"").getBytes(StandardCharsets.UTF_8), "schema"});
        cases.add(new Object[] {
            valid.replace("\"cost_micros\":1", "\"cost_micros\":-1").getBytes(StandardCharsets.UTF_8), "schema"
        });
        cases.add(new Object[] {
            valid.replace("\"cost_micros\":1", "\"cost_micros\":123456789012345678901234567890")
                    .getBytes(StandardCharsets.UTF_8),
            "schema"
        });
        cases.add(new Object[] {
            valid.replace("\"event_ts\":" + (recordTs - 1_000), "\"event_ts\":" + (recordTs + 600_000))
                    .getBytes(StandardCharsets.UTF_8),
            "timestamp"
        });
        for (Object[] c : cases) {
            reasons.put(StreamTestStack.send(producer, input, 0, recordTs, "camp-a", (byte[]) c[0]), (String) c[1]);
        }
        // Any producer can send this under the default limits; raw as JSON is six bytes per control byte.
        byte[] controls = new byte[65_536];
        Arrays.fill(controls, (byte) 1);
        hugeKeyOffset = StreamTestStack.send(producer, input, 0, recordTs, "k".repeat(700_000), controls);
        reasons.put(hugeKeyOffset, "malformed");
        // Stamped near 2^63, and event_ts close to it: valid against its own record timestamp, but past every year
        // a window's end or a lake folder can hold.
        long farTs = Long.MAX_VALUE - 60_000;
        byte[] far = valid.replace("\"event_ts\":" + (recordTs - 1_000), "\"event_ts\":" + (farTs - 1_000))
                .getBytes(StandardCharsets.UTF_8);
        reasons.put(StreamTestStack.send(producer, input, 0, farTs, "camp-a", far), "timestamp");
        return reasons;
    }

    private AdEvent event(
            int partition, String id, EventType type, Instant time, String campaign, String channel, long cost) {
        AdEvent e = new AdEvent(id, type, ms(time), campaign, channel, cost, input, partition, 0, ms(time) + 1_000);
        e.offset = StreamTestStack.send(
                producer,
                input,
                partition,
                e.recordTs,
                campaign,
                EventJson.toJson(e).getBytes(StandardCharsets.UTF_8));
        validOffsets.put(partition + ":" + e.offset, e.eventTs);
        return e;
    }

    private Row awaitRow(WindowKey key, int revision) {
        return Poll.untilPresent(
                WAIT,
                key + " at revision " + revision,
                () -> stack.windowRows(job).stream()
                        .filter(r -> r.window().key().equals(key) && r.revision() >= revision)
                        .findFirst());
    }

    private static WindowKey key(Instant windowStart, String campaign, String channel) {
        return WindowKey.of(ms(windowStart), campaign, channel);
    }

    private static Row row(Instant windowStart, String campaign, String channel, int revision, MeasureValues m) {
        return new Row(
                new dev.recount.db.tables.WindowRow(key(windowStart, campaign, channel), ms(windowStart) + 60_000, m),
                revision);
    }
}
