package dev.recount.stream;

import static dev.recount.stream.Fixtures.TOPIC;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.Attribution;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.source.DeadLetter;
import dev.recount.stream.testutils.CollectingSink;
import dev.recount.stream.testutils.InMemoryKafkaInput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The whole stream topology, as {@link StreamJob#build} wires it, run end to end in a local Flink MiniCluster with no
 * system outside the JVM: a bounded in-memory input of raw Kafka records (validated by the job's own deserializer)
 * and collecting sinks in place of PostgreSQL, the lake and the two topics. {@code StreamJobITCase} runs the same
 * kinds of input through the real systems; this one shows the wiring between the stages (validation → dead letters,
 * lake before de-duplication, de-duplication, too-late routing, windows with lateness, and with attribution on, the
 * join and its windows) in a few seconds.
 *
 * <p>Deterministic by construction: parallelism 1, so every stage has one subtask and every edge one ordered
 * channel, and the watermark reaches each stage right behind the record that moved it. The input's order decides
 * what is late: the records that move event time across a window end move it by far more than the watermark
 * generator's eager step (1 s), so the watermark is emitted at once behind them, before the next record; periodic
 * emits in between can only repeat it, since the records that follow do not raise the largest event time. The
 * idleness is long, so a stall of the (shared) machine cannot mark the input idle half way. No checkpointing: the
 * collecting sinks need none, and the job's two-phase sinks are not in it.
 */
class StreamTopologyTest {
    /** The fixture's settings (1 min windows, 5 s out-of-orderness, 1 min lateness), never idle within a run. */
    private static final EventTimeSettings SETTINGS = Fixtures.SETTINGS.withIdleness(Duration.ofHours(1));

    private static final WindowAlignment WINDOWS = SETTINGS.windows();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final CollectingSink<Row> rows = new CollectingSink<>("window-rows");
    private final CollectingSink<AdEvent> lake = new CollectingSink<>("lake");
    private final CollectingSink<AdEvent> lakeLedger = new CollectingSink<>("lake-ledger");
    private final CollectingSink<DeadLetter> deadLetters = new CollectingSink<>("dead-letters");
    private final CollectingSink<BackfillRecord> backfill = new CollectingSink<>("backfill");
    private final CollectingSink<StreamAttributionMetricsTable.Row> attribution = new CollectingSink<>("attribution");

    @AfterEach
    void removeOutputs() {
        rows.close();
        lake.close();
        lakeLedger.close();
        deadLetters.close();
        backfill.close();
        attribution.close();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theWholeTopologyCountsRoutesAndArchivesEveryRecord() throws Exception {
        Input in = new Input();
        // W0, on time: three keys (one campaign on two channels), a duplicate and one invalid record of each kind.
        AdEvent i1 = in.event("i1", EventType.IMPRESSION, W0.plusSeconds(1), "camp-a", "search", 1_000);
        AdEvent c1 = in.event("c1", EventType.CLICK, W0.plusSeconds(2), "camp-a", "search", 250_000);
        AdEvent v1 = in.event("v1", EventType.CONVERSION, W0.plusSeconds(3), "camp-a", "search", 5_000_000);
        AdEvent i2 = in.event("i2", EventType.IMPRESSION, W0.plusSeconds(4), "camp-b", "display", 1_000);
        in.copyOf(c1, W0.plusSeconds(5));
        in.invalid(InvalidReason.MALFORMED, "{\"event_id\": \"m1\", \"event_type\": ", W0.plusSeconds(6));
        in.invalid(
                InvalidReason.SCHEMA,
                EventJson.toNode(new AdEvent(
                                "s1", EventType.CLICK, ms(W0.plusSeconds(6)), "camp-a", "search", 1, null, 0, 0, 0))
                        .put("event_type", "view")
                        .toString(),
                W0.plusSeconds(7));
        // Valid JSON, but its event_ts lies beyond record timestamp + max-future: it must not move event time either.
        Instant aheadOfItsRecord = W0.plusSeconds(8).plus(SETTINGS.maxFuture()).plusSeconds(60);
        in.invalid(
                InvalidReason.TIMESTAMP,
                EventJson.toJson(
                        new AdEvent("t1", EventType.CLICK, ms(aheadOfItsRecord), "camp-a", "search", 1, null, 0, 0, 0)),
                W0.plusSeconds(8));
        AdEvent x1 = in.event("x1", EventType.CONVERSION, W0.plusSeconds(20), "camp-a", "video", 2_000_000);
        AdEvent c2 = in.event("c2", EventType.CLICK, W0.plusSeconds(50), "camp-b", "display", 300_000);

        // W1: the watermark passes W0's last millisecond, so W0 fires (revision 1).
        AdEvent a1 = in.event("a1", EventType.IMPRESSION, W1.plusSeconds(10), "camp-a", "search", 1_000);
        // Late within the allowed lateness: W0 of camp-a/search fires again, revision 2, with all its events.
        AdEvent late =
                in.event("late-1", EventType.CLICK, W0.plusSeconds(30), "camp-a", "search", 100, W1.plusSeconds(11));
        in.copyOf(i2, W1.plusSeconds(12)); // a copy within lateness: dropped, it re-fires nothing
        AdEvent b1 = in.event("b1", EventType.IMPRESSION, W1.plusSeconds(20), "camp-b", "display", 1_000);

        // W2: the watermark passes W0's last millisecond + allowed lateness; an event for W0 is now too late.
        AdEvent b2 = in.event("b2", EventType.IMPRESSION, W2.plusSeconds(30), "camp-a", "search", 1_000);
        AdEvent tooLate = in.event(
                "too-late-1", EventType.CLICK, W0.plusSeconds(40), "camp-a", "search", 777, W2.plusSeconds(31));
        long watermarkAfterB2 = b2.eventTs - SETTINGS.outOfOrderness().toMillis() - 1;

        JobExecutionResult result = run(in);

        // Every firing and nothing else: W0's three keys, W0 of camp-a/search again for the late click, W1's two
        // keys and W2's one (at the end of the input). The sums are core's, of the events each row must carry.
        List<Row> expectedRows = List.of(
                firing(1, i1, c1, v1),
                firing(1, x1),
                firing(1, i2, c2),
                firing(2, i1, c1, v1, late),
                firing(1, a1),
                firing(1, b1),
                firing(1, b2));
        List<Row> fired = rows.collected();
        assertThat(fired).containsExactlyInAnyOrderElementsOf(expectedRows);
        assertThat(fired.indexOf(firing(1, i1, c1, v1)))
                .as("revision 1 of W0 camp-a/search before revision 2")
                .isLessThan(fired.indexOf(firing(2, i1, c1, v1, late)));

        // Too late: to the backfill sink with the watermark it met, and into no row.
        assertThat(backfill.collected())
                .containsExactly(
                        new BackfillRecord(tooLate, ms(W0), ms(W1), watermarkAfterB2, TOPIC, 0, tooLate.offset));

        // Every invalid record: a dead letter with its reason, coordinates and key; nothing else is one.
        Map<Long, InvalidReason> deadByOffset = new HashMap<>();
        for (DeadLetter d : deadLetters.collected()) {
            JsonNode n = JSON.readTree(d.json);
            long offset = n.get("offset").asLong();
            assertThat(n.get("reason").asText())
                    .as("reason at offset %d", offset)
                    .isEqualTo(d.reason.wireName());
            assertThat(n.get("topic").asText()).isEqualTo(TOPIC);
            assertThat(n.get("partition").asInt()).isZero();
            assertThat(d.key).as("key at offset %d", offset).isEqualTo(in.keyAt(offset));
            assertThat(deadByOffset.put(offset, d.reason))
                    .as("one dead letter for offset %d", offset)
                    .isNull();
        }
        assertThat(deadByOffset).isEqualTo(in.invalid);
        assertThat(deadByOffset)
                .as("one of each reason")
                .hasSize(InvalidReason.values().length)
                .containsValues(InvalidReason.values());

        // The lake is raw: every valid record, copies, the late and the too-late one included, as read.
        assertThat(lake.collected()).containsExactlyInAnyOrderElementsOf(in.valid);
        // The ledger counts exactly what the lake receives.
        assertThat(lakeLedger.collected()).containsExactlyInAnyOrderElementsOf(in.valid);

        // The job's own totals agree.
        Map<String, Object> totals = result.getAllAccumulatorResults();
        Map<InvalidReason, Long> invalidCounts = new EnumMap<>(InvalidReason.class);
        for (InvalidReason r : InvalidReason.values()) {
            invalidCounts.put(r, JobTotals.get(totals, JobTotals.invalid(r)));
        }
        assertThat(invalidCounts)
                .isEqualTo(Map.of(InvalidReason.MALFORMED, 1L, InvalidReason.SCHEMA, 1L, InvalidReason.TIMESTAMP, 1L));
        assertThat(JobTotals.get(totals, JobTotals.VALID_EVENTS)).isEqualTo(in.valid.size());
        assertThat(JobTotals.get(totals, JobTotals.DUPLICATES_DROPPED)).isEqualTo(2);
        assertThat(JobTotals.get(totals, JobTotals.TOO_LATE_EVENTS)).isEqualTo(1);
        assertThat(JobTotals.get(totals, JobTotals.TOO_LATE_AT_WINDOW))
                .as("the safety net caught nothing")
                .isZero();
        assertThat(JobTotals.get(totals, JobTotals.WINDOW_FIRINGS)).isEqualTo(expectedRows.size());
        assertThat(JobTotals.get(totals, JobTotals.LATE_REFIRINGS)).isEqualTo(1);
    }

    /**
     * With attribution on: the last row of every window key is core's rule applied to every valid record sent (core's
     * reference counts the first copy of an id, as the stream does), and a late impression that attributes a click
     * after its window fired re-fires that row (revision 2).
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void withAttributionTheLastRowOfEveryKeyIsCoresRule() throws Exception {
        AttributionRule rule = AttributionRule.of(Duration.ofMinutes(30));
        Input in = new Input();
        // W0: a click after its impression, a conversion of the same request, a click whose impression comes late,
        // a click without a request id, a copy of an attributed click, and an impression nothing clicks.
        AdEvent impR1 = in.event("imp-r1", EventType.IMPRESSION, W0.plusSeconds(1), "camp-a", "search", 1_000, "r1");
        AdEvent clickR1 = in.event("clk-r1", EventType.CLICK, W0.plusSeconds(10), "camp-a", "search", 250_000, "r1");
        AdEvent convR1 =
                in.event("conv-r1", EventType.CONVERSION, W0.plusSeconds(20), "camp-a", "search", 5_000_000, "r1");
        AdEvent clickR2 = in.event("clk-r2", EventType.CLICK, W0.plusSeconds(12), "camp-a", "search", 200_000, "r2");
        in.event("clk-none", EventType.CLICK, W0.plusSeconds(13), "camp-b", "display", 150_000);
        in.copyOf(clickR1, W0.plusSeconds(14));
        in.event("imp-r3", EventType.IMPRESSION, W0.plusSeconds(15), "camp-b", "display", 1_000, "r3");
        // W1: the watermark passes W0, which fires with clk-r2 unattributed.
        in.event("clk-r3", EventType.CLICK, W1.plusSeconds(10), "camp-b", "display", 120_000, "r3");
        // r2's impression, late within lateness and before its click: clk-r2 is attributed after all (revision 2).
        AdEvent impR2 = in.event(
                "imp-r2", EventType.IMPRESSION, W0.plusSeconds(5), "camp-a", "search", 1_000, "r2", W1.plusSeconds(11));

        run(in, rule);

        Attribution expected = new Attribution(rule, WINDOWS);
        in.valid.forEach(expected::add);
        Map<WindowKey, StreamAttributionMetricsTable.Row> last = new HashMap<>();
        Map<WindowKey, Integer> revisions = new HashMap<>();
        for (StreamAttributionMetricsTable.Row r : attribution.collected()) {
            WindowKey key = r.attribution().key();
            assertThat(r.revision())
                    .as("revisions of %s count up from 1", key)
                    .isEqualTo(revisions.merge(key, 1, Integer::sum));
            assertThat(r.attribution().windowEndMillis()).isEqualTo(key.windowStartMillis() + WINDOWS.sizeMillis());
            last.put(key, r);
        }
        Map<WindowKey, AttributionMetrics> lastMetrics = new HashMap<>();
        last.forEach((k, r) -> lastMetrics.put(k, r.attribution().metrics()));
        assertThat(lastMetrics).isEqualTo(expected.perWindow());
        assertThat(last.get(new WindowKey(ms(W0), "camp-a", "search")).revision())
                .as("the late impression re-fired W0 of camp-a/search")
                .isEqualTo(2);
        // The window metrics beside it are as without attribution: the late impression re-fires W0 there as well.
        assertThat(rows.collected()).contains(firing(2, impR1, clickR1, convR1, clickR2, impR2));
    }

    /** Builds the job without attribution, with this test's input and sinks, and runs it to the end of the input. */
    private JobExecutionResult run(Input in) throws Exception {
        return run(in, null);
    }

    /** As above, with attribution by {@code rule} when it is not null. */
    private JobExecutionResult run(Input in, AttributionRule rule) throws Exception {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false); // as the job runs: a type without a Flink serializer fails
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(16)); // hashmap state needs none
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        StreamSinks sinks = new StreamSinks(rows, lake, lakeLedger, deadLetters, backfill);
        StreamJob.build(
                env,
                InMemoryKafkaInput.source(in.records, new EventValidator(SETTINGS.validation())),
                rule == null ? sinks : sinks.withAttribution(attribution),
                SETTINGS,
                rule,
                Long.MIN_VALUE);
        return env.execute("stream-topology-test");
    }

    /** The row a firing must produce: the window and key of {@code events}, core's sums of them. */
    private static Row firing(int revision, AdEvent... events) {
        AdEvent first = events[0];
        WindowKey key = new WindowKey(WINDOWS.windowStart(first.eventTs), first.campaignId, first.channelId);
        MetricsAccumulator sums = new MetricsAccumulator();
        for (AdEvent e : events) {
            if (!key.equals(new WindowKey(WINDOWS.windowStart(e.eventTs), e.campaignId, e.channelId))) {
                throw new IllegalArgumentException("fixture error: " + e.eventId + " is not in " + key);
            }
            sums.add(e);
        }
        return new Row(new WindowRow(key, WINDOWS.windowEnd(first.eventTs), sums.toMetrics()), revision);
    }

    /** The input, in order: raw records on partition 0 of {@link Fixtures#TOPIC}, and what each one should become. */
    private static final class Input {
        final List<InMemoryKafkaInput.Record> records = new ArrayList<>();
        /** Valid records as the validator should read them (copies included), in input order. */
        final List<AdEvent> valid = new ArrayList<>();
        /** Offset of each invalid record → the reason it must be dead-lettered with. */
        final Map<Long, InvalidReason> invalid = new LinkedHashMap<>();

        /** An event without a request id, sent 1 s after its event time. */
        AdEvent event(String id, EventType type, Instant eventTime, String campaign, String channel, long costMicros) {
            return event(id, type, eventTime, campaign, channel, costMicros, null, eventTime.plusSeconds(1));
        }

        /** An event without a request id, sent at {@code sentAt} (its Kafka record timestamp). */
        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long costMicros,
                Instant sentAt) {
            return event(id, type, eventTime, campaign, channel, costMicros, null, sentAt);
        }

        /** An event of request {@code requestId} (null: none), sent 1 s after its event time. */
        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long costMicros,
                String requestId) {
            return event(id, type, eventTime, campaign, channel, costMicros, requestId, eventTime.plusSeconds(1));
        }

        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long costMicros,
                String requestId,
                Instant sentAt) {
            AdEvent e = new AdEvent(
                    id,
                    type,
                    ms(eventTime),
                    campaign,
                    channel,
                    costMicros,
                    requestId,
                    TOPIC,
                    0,
                    records.size(),
                    ms(sentAt));
            add(sentAt, id, EventJson.toJson(e));
            valid.add(e);
            return e;
        }

        /** The same event_id and payload sent again at {@code sentAt}: a new record the job must not count. */
        AdEvent copyOf(AdEvent original, Instant sentAt) {
            AdEvent copy = new AdEvent(
                    original.eventId,
                    original.eventType,
                    original.eventTs,
                    original.campaignId,
                    original.channelId,
                    original.costMicros,
                    original.requestId,
                    TOPIC,
                    0,
                    records.size(),
                    ms(sentAt));
            add(sentAt, original.eventId, EventJson.toJson(original));
            valid.add(copy);
            return copy;
        }

        void invalid(InvalidReason expected, String value, Instant sentAt) {
            invalid.put((long) records.size(), expected);
            add(sentAt, "bad-" + expected.wireName(), value);
        }

        byte[] keyAt(long offset) {
            return records.get(Math.toIntExact(offset)).key();
        }

        private void add(Instant sentAt, String key, String value) {
            records.add(new InMemoryKafkaInput.Record(
                    TOPIC,
                    0,
                    records.size(),
                    ms(sentAt),
                    key.getBytes(StandardCharsets.UTF_8),
                    value.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
