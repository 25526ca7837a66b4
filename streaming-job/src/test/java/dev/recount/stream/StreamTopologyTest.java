package dev.recount.stream;

import static dev.recount.stream.Fixtures.TOPIC;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.W2;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.Attribution;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.sink.SetAttributionRow;
import dev.recount.stream.sink.SetWindowRow;
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
 * system outside the JVM: a bounded in-memory input of raw Kafka records (validated by the job's own deserializer,
 * declared attributes included) and collecting sinks in place of PostgreSQL, the lake and the two topics. Three metric
 * sets are computed in the one pass ({@link Fixtures#THREE_SETS_YAML}): the default set and channel_country with 1 min
 * windows, campaign_slot with 5 min ones. {@code StreamJobITCase} runs the same kinds of input through the real
 * systems; this one shows the wiring between the stages (validation → dead letters, lake before de-duplication,
 * de-duplication, too-late routing per set, windows per set with lateness, and with attribution on, the join and its
 * windows) in a few seconds.
 *
 * <p>Deterministic by construction: parallelism 1, so every stage has one subtask and every edge one ordered
 * channel, and the watermark reaches each stage right behind the record that moved it. The input's order decides
 * what is late: the records that move event time across a window end move it by far more than the watermark
 * generator's eager step (1 s), so the watermark is emitted at once behind them, before the next record; periodic
 * emits in between can only repeat it, since the records that follow do not raise the largest event time. The
 * idleness is long, so a stall of the (shared) machine cannot mark the input idle half way. No checkpointing: the
 * collecting sinks need none, and the job's two-phase sinks are not in it.
 *
 * <p>Every expected row is written out by hand below, from the events listed; nothing is recomputed with the job's
 * own maths.
 */
class StreamTopologyTest {
    /** The fixture's settings (5 s out-of-orderness, 1 min lateness), never idle within a run. */
    private static final EventTimeSettings SETTINGS = Fixtures.SETTINGS.withIdleness(Duration.ofHours(1));

    private static final long MINUTE = 60_000;
    private static final Instant W4 = W0.plusSeconds(4 * 60);
    private static final Instant W5 = W0.plusSeconds(5 * 60);
    private static final Instant W6 = W0.plusSeconds(6 * 60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final CollectingSink<SetWindowRow> rows = new CollectingSink<>("window-rows");
    private final CollectingSink<AdEvent> lake = new CollectingSink<>("lake");
    private final CollectingSink<AdEvent> lakeLedger = new CollectingSink<>("lake-ledger");
    private final CollectingSink<DeadLetter> deadLetters = new CollectingSink<>("dead-letters");
    private final CollectingSink<BackfillRecord> backfill = new CollectingSink<>("backfill");
    private final CollectingSink<SetAttributionRow> attribution = new CollectingSink<>("attribution");

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
    void theWholeTopologyCountsEverySetRoutesAndArchivesEveryRecord() throws Exception {
        Input in = new Input(Fixtures.THREE_SETS);
        // W0, on time: three keys of the default set, a duplicate and one invalid record of each kind.
        in.event("i1", EventType.IMPRESSION, W0.plusSeconds(1), "camp-a", "search", 1_000, "top", "DE", 2);
        AdEvent c1 = in.event("c1", EventType.CLICK, W0.plusSeconds(2), "camp-a", "search", 250_000, "top", "FR", 1);
        in.event("v1", EventType.CONVERSION, W0.plusSeconds(3), "camp-a", "search", 5_000_000, "top", "DE", 5);
        AdEvent i2 =
                in.event("i2", EventType.IMPRESSION, W0.plusSeconds(4), "camp-b", "display", 1_000, "side", "US", 0);
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
        in.event("x1", EventType.CONVERSION, W0.plusSeconds(20), "camp-a", "video", 2_000_000, "top", "other", 3);
        in.event("c2", EventType.CLICK, W0.plusSeconds(50), "camp-b", "display", 300_000, "side", "DE", 1);

        // W1: the watermark passes W0's last millisecond: W0 fires in the two 1 min sets (not the 5 min window).
        in.event("a1", EventType.IMPRESSION, W1.plusSeconds(10), "camp-a", "search", 1_000, "top", "DE", 0);
        // Late within the lateness of the 1 min sets: their W0 re-fires (revision 2); the 5 min window just adds it.
        in.event(
                "late-1",
                EventType.CLICK,
                W0.plusSeconds(30),
                "camp-a",
                "search",
                100,
                "top",
                "DE",
                4,
                W1.plusSeconds(11));
        in.copyOf(i2, W1.plusSeconds(12)); // a copy within lateness: dropped, it re-fires nothing
        in.event("b1", EventType.IMPRESSION, W1.plusSeconds(20), "camp-b", "display", 1_000, "side", "US", 0);

        // W2: the watermark passes W0's last millisecond + lateness: W0 is closed for the 1 min sets.
        AdEvent b2 =
                in.event("b2", EventType.IMPRESSION, W2.plusSeconds(30), "camp-a", "search", 1_000, "top", "FR", 0);
        // Too late for the two 1 min sets, on time for campaign_slot's [10:00, 10:05): one record names the two.
        AdEvent tooLate1 = in.event(
                "too-late-1",
                EventType.CLICK,
                W0.plusSeconds(40),
                "camp-a",
                "search",
                777,
                "top",
                "DE",
                6,
                W2.plusSeconds(31));
        long watermarkAfterB2 = b2.eventTs - SETTINGS.outOfOrderness().toMillis() - 1;

        // W5: the 5 min window fires; a late click of W4 fires that (empty) 1 min window and re-fires the 5 min one.
        in.event("d1", EventType.IMPRESSION, W5.plusSeconds(30), "camp-a", "search", 1_000, "top", "DE", 0);
        in.event(
                "late-2",
                EventType.CLICK,
                W4.plusSeconds(50),
                "camp-a",
                "search",
                200,
                "top",
                "DE",
                0,
                W5.plusSeconds(31));
        // W6: the 5 min window is closed too: an event of W0 is now too late for every set, still one record.
        AdEvent e1 =
                in.event("e1", EventType.IMPRESSION, W6.plusSeconds(30), "camp-a", "search", 1_000, "top", "DE", 0);
        AdEvent tooLate2 = in.event(
                "too-late-2",
                EventType.CLICK,
                W0.plusSeconds(45),
                "camp-a",
                "search",
                999,
                "top",
                "DE",
                0,
                W6.plusSeconds(31));
        long watermarkAfterE1 = e1.eventTs - SETTINGS.outOfOrderness().toMillis() - 1;

        JobExecutionResult result = run(in, Fixtures.THREE_SETS, null);

        // Every firing of every set and nothing else, written out from the events above.
        String d = MetricSet.DEFAULT;
        String slot = "campaign_slot";
        String country = "channel_country";
        List<SetWindowRow> expectedRows = List.of(
                // default: (campaign, channel) → impressions, clicks, conversions, spend_micros, events
                row(d, W0, MINUTE, 1, values(1, 1, 1, 5_251_000, 3), "camp-a", "search"),
                row(d, W0, MINUTE, 2, values(1, 2, 1, 5_251_100, 4), "camp-a", "search"),
                row(d, W0, MINUTE, 1, values(1, 1, 0, 301_000, 2), "camp-b", "display"),
                row(d, W0, MINUTE, 1, values(0, 0, 1, 2_000_000, 1), "camp-a", "video"),
                row(d, W1, MINUTE, 1, values(1, 0, 0, 1_000, 1), "camp-a", "search"),
                row(d, W1, MINUTE, 1, values(1, 0, 0, 1_000, 1), "camp-b", "display"),
                row(d, W2, MINUTE, 1, values(1, 0, 0, 1_000, 1), "camp-a", "search"),
                row(d, W4, MINUTE, 1, values(0, 1, 0, 200, 1), "camp-a", "search"),
                row(d, W5, MINUTE, 1, values(1, 0, 0, 1_000, 1), "camp-a", "search"),
                row(d, W6, MINUTE, 1, values(1, 0, 0, 1_000, 1), "camp-a", "search"),
                // campaign_slot: (campaign, slot), 5 min → impressions, spend_micros, events
                row(slot, W0, 5 * MINUTE, 1, values(3, 7_253_877, 8), "camp-a", "top"),
                row(slot, W0, 5 * MINUTE, 2, values(3, 7_254_077, 9), "camp-a", "top"),
                row(slot, W0, 5 * MINUTE, 1, values(2, 302_000, 3), "camp-b", "side"),
                row(slot, W5, 5 * MINUTE, 1, values(2, 2_000, 2), "camp-a", "top"),
                // channel_country: (channel, country) → eu_clicks (DE, FR), units (quantity), events
                row(country, W0, MINUTE, 1, values(0, 7, 2), "search", "DE"),
                row(country, W0, MINUTE, 2, values(1, 11, 3), "search", "DE"),
                row(country, W0, MINUTE, 1, values(1, 1, 1), "search", "FR"),
                row(country, W0, MINUTE, 1, values(0, 0, 1), "display", "US"),
                row(country, W0, MINUTE, 1, values(0, 3, 1), "video", "other"),
                row(country, W0, MINUTE, 1, values(1, 1, 1), "display", "DE"),
                row(country, W1, MINUTE, 1, values(0, 0, 1), "search", "DE"),
                row(country, W1, MINUTE, 1, values(0, 0, 1), "display", "US"),
                row(country, W2, MINUTE, 1, values(0, 0, 1), "search", "FR"),
                row(country, W4, MINUTE, 1, values(1, 0, 1), "search", "DE"),
                row(country, W5, MINUTE, 1, values(0, 0, 1), "search", "DE"),
                row(country, W6, MINUTE, 1, values(0, 0, 1), "search", "DE"));
        List<SetWindowRow> fired = rows.collected();
        assertThat(fired).containsExactlyInAnyOrderElementsOf(expectedRows);
        for (int i = 0; i < expectedRows.size(); i++) {
            SetWindowRow r = expectedRows.get(i);
            if (r.row().revision() > 1) {
                assertThat(fired.indexOf(expectedRows.get(i - 1)))
                        .as(
                                "revision %d of %s after revision %d",
                                r.row().revision(), r, r.row().revision() - 1)
                        .isLessThan(fired.indexOf(r));
            }
        }

        // Too late: one record per event, naming the sets it was too late for with their windows and the watermark
        // it met; in no row of those sets.
        assertThat(backfill.collected())
                .containsExactly(
                        new BackfillRecord(
                                tooLate1,
                                List.of(new SetWindow(d, ms(W0), ms(W1)), new SetWindow(country, ms(W0), ms(W1))),
                                watermarkAfterB2,
                                TOPIC,
                                0,
                                tooLate1.offset),
                        new BackfillRecord(
                                tooLate2,
                                List.of(
                                        new SetWindow(d, ms(W0), ms(W1)),
                                        new SetWindow(slot, ms(W0), ms(W5)),
                                        new SetWindow(country, ms(W0), ms(W1))),
                                watermarkAfterE1,
                                TOPIC,
                                0,
                                tooLate2.offset));

        // Every invalid record: a dead letter with its reason, coordinates and key; nothing else is one.
        Map<Long, InvalidReason> deadByOffset = new HashMap<>();
        for (DeadLetter dead : deadLetters.collected()) {
            JsonNode n = JSON.readTree(dead.json);
            long offset = n.get("offset").asLong();
            assertThat(n.get("reason").asText())
                    .as("reason at offset %d", offset)
                    .isEqualTo(dead.reason.wireName());
            assertThat(n.get("topic").asText()).isEqualTo(TOPIC);
            assertThat(n.get("partition").asInt()).isZero();
            assertThat(dead.key).as("key at offset %d", offset).isEqualTo(in.keyAt(offset));
            assertThat(deadByOffset.put(offset, dead.reason))
                    .as("one dead letter for offset %d", offset)
                    .isNull();
        }
        assertThat(deadByOffset).isEqualTo(in.invalid);
        assertThat(deadByOffset)
                .as("one of each reason")
                .hasSize(InvalidReason.values().length)
                .containsValues(InvalidReason.values());

        // The lake is raw: every valid record, copies, the late and the too-late ones included, as read, with the
        // fields beyond the contract (declared attributes and their raw JSON) carried through the job.
        assertThat(lake.collected()).containsExactlyInAnyOrderElementsOf(in.valid);
        assertThat(lake.collected())
                .allSatisfy(e -> assertThat(e.attributesJson).contains("\"slot_id\""));
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
        assertThat(JobTotals.get(totals, JobTotals.TOO_LATE_EVENTS)).isEqualTo(2);
        assertThat(JobTotals.get(totals, JobTotals.TOO_LATE_AT_WINDOW))
                .as("the safety net caught nothing")
                .isZero();
        assertThat(JobTotals.get(totals, JobTotals.WINDOW_FIRINGS)).isEqualTo(expectedRows.size());
        assertThat(JobTotals.get(totals, JobTotals.LATE_REFIRINGS)).isEqualTo(3);
    }

    /**
     * With attribution on for the default set and channel_country (not campaign_slot): the last row of every window
     * key of each is core's rule applied to every valid record sent, per set (core's reference counts the first copy of
     * an id, as the stream does), and a late impression that attributes a click after its window fired re-fires that
     * row (revision 2) in both.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void withAttributionTheLastRowOfEveryKeyOfEverySetIsCoresRule() throws Exception {
        AttributionRule rule = AttributionRule.of(Duration.ofMinutes(30));
        MetricSets definitions = Fixtures.definitions(
                Fixtures.THREE_SETS_YAML
                        .replace("  - name: default\n", "  - name: default\n    attribution: true\n")
                        .replace(
                                "    dimensions: [channel_id, country]\n",
                                "    dimensions: [channel_id, country]\n    attribution: true\n"),
                false);
        Input in = new Input(definitions);
        // W0: a click after its impression, a conversion of the same request, a click whose impression comes late,
        // a click without a request id, a copy of an attributed click, and an impression nothing clicks.
        in.attributed("imp-r1", EventType.IMPRESSION, W0.plusSeconds(1), "camp-a", "search", 1_000, "r1", "DE");
        AdEvent clickR1 =
                in.attributed("clk-r1", EventType.CLICK, W0.plusSeconds(10), "camp-a", "search", 250_000, "r1", "DE");
        in.attributed("conv-r1", EventType.CONVERSION, W0.plusSeconds(20), "camp-a", "search", 5_000_000, "r1", "DE");
        in.attributed("clk-r2", EventType.CLICK, W0.plusSeconds(12), "camp-a", "search", 200_000, "r2", "FR");
        in.attributed("clk-none", EventType.CLICK, W0.plusSeconds(13), "camp-b", "display", 150_000, null, "DE");
        in.copyOf(clickR1, W0.plusSeconds(14));
        in.attributed("imp-r3", EventType.IMPRESSION, W0.plusSeconds(15), "camp-b", "display", 1_000, "r3", "US");
        // W1: the watermark passes W0, which fires with clk-r2 unattributed.
        in.attributed("clk-r3", EventType.CLICK, W1.plusSeconds(10), "camp-b", "display", 120_000, "r3", "US");
        // r2's impression, late within lateness and before its click: clk-r2 is attributed after all (revision 2).
        in.event(
                "imp-r2",
                EventType.IMPRESSION,
                W0.plusSeconds(5),
                "camp-a",
                "search",
                1_000,
                "r2",
                "top",
                "FR",
                0,
                W1.plusSeconds(11));

        run(in, definitions, rule);

        Attribution expected = new Attribution(rule);
        in.valid.forEach(expected::add);
        Map<String, Map<WindowKey, AttributionMetrics>> lastBySet = new HashMap<>();
        Map<String, Integer> revisions = new HashMap<>();
        Map<String, Integer> lastRevision = new HashMap<>();
        for (SetAttributionRow r : attribution.collected()) {
            WindowKey key = r.row().attribution().key();
            String id = r.set() + " " + key;
            assertThat(r.row().revision())
                    .as("revisions of %s count up from 1", id)
                    .isEqualTo(revisions.merge(id, 1, Integer::sum));
            lastBySet
                    .computeIfAbsent(r.set(), s -> new HashMap<>())
                    .put(key, r.row().attribution().metrics());
            lastRevision.put(id, r.row().revision());
        }
        assertThat(lastBySet).containsOnlyKeys(MetricSet.DEFAULT, "channel_country");
        for (String set : List.of(MetricSet.DEFAULT, "channel_country")) {
            assertThat(lastBySet.get(set))
                    .as("set %s", set)
                    .isEqualTo(expected.perWindow(definitions.set(set).orElseThrow()));
        }
        assertThat(lastRevision.get(MetricSet.DEFAULT + " " + WindowKey.of(ms(W0), "camp-a", "search")))
                .as("the late impression re-fired W0 of camp-a/search")
                .isEqualTo(2);
        assertThat(lastRevision.get("channel_country " + WindowKey.of(ms(W0), "search", "FR")))
                .as("and W0 of search/FR in channel_country")
                .isEqualTo(2);
    }

    /** Builds the job with {@code definitions} and this test's input and sinks, and runs it to the end of the input. */
    private JobExecutionResult run(Input in, MetricSets definitions, AttributionRule rule) throws Exception {
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false); // as the job runs: a type without a Flink serializer fails
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(16)); // hashmap state needs none
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        StreamSinks sinks = new StreamSinks(rows, lake, lakeLedger, deadLetters, backfill);
        StreamJob.build(
                env,
                InMemoryKafkaInput.source(in.records, in.validator),
                rule == null ? sinks : sinks.withAttribution(attribution),
                SETTINGS,
                definitions,
                rule,
                Long.MIN_VALUE);
        return env.execute("stream-topology-test");
    }

    private static SetWindowRow row(
            String set, Instant start, long sizeMillis, int revision, MeasureValues values, String... dimensions) {
        return new SetWindowRow(
                set,
                new Row(new WindowRow(WindowKey.of(ms(start), dimensions), ms(start) + sizeMillis, values), revision));
    }

    private static MeasureValues values(long... values) {
        return MeasureValues.of(values);
    }

    /**
     * The input, in order: raw records on partition 0 of {@link Fixtures#TOPIC}, and what each one should become. A
     * valid record's expected event is what the job's validator makes of it (with the definitions' attributes).
     */
    private static final class Input {
        final List<InMemoryKafkaInput.Record> records = new ArrayList<>();
        /** Valid records as the validator reads them (copies included), in input order. */
        final List<AdEvent> valid = new ArrayList<>();
        /** Offset of each invalid record → the reason it must be dead-lettered with. */
        final Map<Long, InvalidReason> invalid = new LinkedHashMap<>();

        final EventValidator validator;

        Input(MetricSets definitions) {
            this.validator = new EventValidator(SETTINGS.validation(), definitions.attributes());
        }

        /** An event with attributes slot_id, country and quantity, sent 1 s after its event time. */
        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long cost,
                String slot,
                String country,
                long quantity) {
            return event(
                    id, type, eventTime, campaign, channel, cost, slot, country, quantity, eventTime.plusSeconds(1));
        }

        /** As above, sent at {@code sentAt} (its Kafka record timestamp). */
        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long cost,
                String slot,
                String country,
                long quantity,
                Instant sentAt) {
            return event(id, type, eventTime, campaign, channel, cost, null, slot, country, quantity, sentAt);
        }

        /** An event of request {@code requestId} (null: none), from {@code country}, sent 1 s after its event time. */
        AdEvent attributed(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long cost,
                String requestId,
                String country) {
            return event(
                    id,
                    type,
                    eventTime,
                    campaign,
                    channel,
                    cost,
                    requestId,
                    "top",
                    country,
                    0,
                    eventTime.plusSeconds(1));
        }

        AdEvent event(
                String id,
                EventType type,
                Instant eventTime,
                String campaign,
                String channel,
                long cost,
                String requestId,
                String slot,
                String country,
                long quantity,
                Instant sentAt) {
            ObjectNode json = EventJson.toNode(
                    new AdEvent(id, type, ms(eventTime), campaign, channel, cost, requestId, TOPIC, 0, 0, 0));
            json.put("slot_id", slot).put("country", country).put("quantity", quantity);
            return add(sentAt, id, json.toString());
        }

        /** The same event_id and payload sent again at {@code sentAt}: a new record the job must not count. */
        AdEvent copyOf(AdEvent original, Instant sentAt) {
            return add(sentAt, original.eventId, EventJson.toJson(original));
        }

        void invalid(InvalidReason expected, String value, Instant sentAt) {
            invalid.put((long) records.size(), expected);
            addRecord(sentAt, "bad-" + expected.wireName(), value);
        }

        byte[] keyAt(long offset) {
            return records.get(Math.toIntExact(offset)).key();
        }

        /** A valid record: the event the validator reads from it is what the job must see. */
        private AdEvent add(Instant sentAt, String key, String value) {
            long offset = records.size();
            ValidationResult result =
                    validator.validate(value.getBytes(StandardCharsets.UTF_8), ms(sentAt), TOPIC, 0, offset);
            if (!result.isValid()) throw new IllegalArgumentException("fixture error: " + key + ": " + result.detail());
            addRecord(sentAt, key, value);
            valid.add(result.event());
            return result.event();
        }

        private void addRecord(Instant sentAt, String key, String value) {
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
