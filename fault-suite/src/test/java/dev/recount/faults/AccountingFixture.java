package dev.recount.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.faults.Outputs.LakeRow;
import dev.recount.faults.Outputs.TopicRecord;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.EventReader;
import dev.recount.oracle.Key;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.SetCounter;
import dev.recount.oracle.SetTruth;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A small round's input and the outputs a correct pipeline makes of it, as plain data for the judge: four events (one
 * sent twice, one too late for every set), a malformed record and one breaking the schema, counted in the suite's three
 * metric sets. A test breaks one output the way a faulty pipeline would and asks the judge.
 *
 * <ul>
 *   <li>0: e1, an impression of cmp-1 on web (request req-1), 10:00:10;</li>
 *   <li>1: e2, a click of cmp-1 on web (req-1: attributed), 10:00:20;</li>
 *   <li>2: e3, a conversion of cmp-2 on ios with {@code "request_id": null} and a quantity of 3, 10:01:10: too late,
 *       on the backfill topic for every set;</li>
 *   <li>3: e4, an impression of cmp-2 on ios with a field no set declares (sdk), 10:01:20;</li>
 *   <li>4: e1 again, the same bytes;</li>
 *   <li>5: malformed; 6: a negative cost (schema).</li>
 * </ul>
 */
final class AccountingFixture {
    static final String INPUT = "faults-in";
    static final String BACKFILL = "faults-in-late";
    static final String DEAD_LETTERS = "faults-in-dlq";
    static final long T0 = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
    static final OracleSettings SETTINGS = new OracleSettings(
            Duration.ofMinutes(1),
            false,
            Duration.ofMinutes(2),
            Duration.ofDays(7),
            Duration.ofMinutes(5),
            1_000_000_000_000L);
    /** Records reach the topic 2 s after their event time. */
    static final long DELAY = 2_000;

    static final String E1 = event(
            "e1",
            "impression",
            10_000,
            "cmp-1",
            "web",
            1000,
            ",\"request_id\":\"req-1\"," + "\"slot_id\":\"home-top\",\"country\":\"DE\",\"device\":\"mobile\"");
    static final String E2 = event(
            "e2",
            "click",
            20_000,
            "cmp-1",
            "web",
            500,
            ",\"request_id\":\"req-1\"," + "\"slot_id\":\"home-top\",\"country\":\"DE\",\"device\":\"mobile\"");
    static final String E3 = event(
            "e3",
            "conversion",
            70_000,
            "cmp-2",
            "ios",
            2000,
            ",\"request_id\":null,"
                    + "\"slot_id\":\"video-pre\",\"country\":\"FR\",\"device\":\"mobile\",\"quantity\":3");
    static final String E4 = event(
            "e4",
            "impression",
            80_000,
            "cmp-2",
            "ios",
            700,
            ",\"slot_id\":\"home-side\","
                    + "\"country\":\"US\",\"device\":\"tablet\",\"sdk\":{\"name\":\"recount-js\",\"version\":\"5.1.0\"}");
    static final String MALFORMED = "{\"event_id\":\"e5\",";
    static final String NEGATIVE_COST = event("e6", "click", 30_000, "cmp-1", "web", -1, "");

    private static final ObjectMapper JSON = new ObjectMapper();

    final Definitions definitions = Definitions.parse(SuiteSets.yaml(), SETTINGS);
    final List<Sent.InputRecord> input = new ArrayList<>();
    final Sent sent;
    final Map<String, SortedMap<Key, List<BigInteger>>> streamRows;
    final List<TopicRecord> backfill = new ArrayList<>();
    final List<TopicRecord> deadLetters = new ArrayList<>();
    final List<LakeRow> lake = new ArrayList<>();
    final Map<Long, Long> archivedByHour = new TreeMap<>();
    String streamLogs = "";

    AccountingFixture() {
        List<String> values = List.of(E1, E2, E3, E4, E1, MALFORMED, NEGATIVE_COST);
        for (int offset = 0; offset < values.size(); offset++) {
            long ts = values.get(offset).equals(MALFORMED) ? T0 + DELAY : recordTs(values.get(offset));
            input.add(new Sent.InputRecord(at(offset), ts, bytes(values.get(offset))));
        }
        sent = Sent.judge(input, definitions, SETTINGS);
        streamRows = streamCounting("e1", "e2", "e4");
        backfill.add(backfillRecord(E3, 2, T0 + 6 * 60_000));
        deadLetters.add(deadLetter("malformed", 5));
        deadLetters.add(deadLetter("schema", 6));
        for (int offset = 0; offset <= 4; offset++) lake.add(lakeRow(offset, values.get(offset)));
        archivedByHour.put(T0, 5L);
    }

    /** The outputs as they stand, judged; every set counted from its first window. */
    Accounting.Result judge() {
        return Accounting.afterDrain(sent, afterDrain(), Map.of());
    }

    Outputs.AfterDrain afterDrain() {
        return new Outputs.AfterDrain(streamRows, backfill, deadLetters, lake, archivedByHour, streamLogs);
    }

    /** What every set's serving views hold when they equal the truth. */
    Outputs.Served servedAsTruth() {
        Map<String, SortedMap<Key, List<BigInteger>>> windows = new LinkedHashMap<>();
        Map<String, SortedMap<Key, List<BigInteger>>> attribution = new LinkedHashMap<>();
        for (SetTruth t : sent.truth().sets()) {
            windows.put(t.name(), new TreeMap<>(t.rows()));
            if (t.attribution() != null) attribution.put(t.name(), new TreeMap<>(t.attribution()));
        }
        return new Outputs.Served(windows, attribution);
    }

    /** Every set's rows made of the events {@code ids} (their first copies), as the stream would write them. */
    Map<String, SortedMap<Key, List<BigInteger>>> streamCounting(String... ids) {
        EventReader reader = new EventReader(definitions.attributes(), SETTINGS);
        Map<String, SortedMap<Key, List<BigInteger>>> rows = new LinkedHashMap<>();
        for (Definitions.MetricSet set : definitions.sets()) {
            SetCounter counter = new SetCounter(set);
            for (String id : ids) {
                Sent.Valid v = sent.copiesOf(id).get(0);
                counter.add(reader.read(bytes(v.payload().toString()), v.timestamp())
                        .event());
            }
            rows.put(set.name(), new TreeMap<>(counter.rows()));
        }
        return rows;
    }

    /** The backfill record the stream writes for the event {@code json} read at {@code offset}, too late everywhere. */
    TopicRecord backfillRecord(String json, int offset, long watermark) {
        ObjectNode event = Payloads.backfillEvent((ObjectNode) read(json));
        long ts = event.get("event_ts").asLong();
        ObjectNode r = JSON.createObjectNode();
        r.set("event", event);
        var sets = r.putArray("sets");
        for (Definitions.MetricSet s : definitions.sets()) {
            long start = Math.floorDiv(ts, s.windowMillis()) * s.windowMillis();
            sets.addObject()
                    .put("set", s.name())
                    .put("window_start", start)
                    .put("window_end", start + s.windowMillis());
        }
        r.put("window_start", sets.get(0).get("window_start").asLong());
        r.put("window_end", sets.get(0).get("window_end").asLong());
        r.put("watermark", watermark);
        r.put("topic", INPUT);
        r.put("partition", 0);
        r.put("offset", offset);
        return new TopicRecord(new Coordinates(BACKFILL, 0, backfill.size()), bytes(r.toString()));
    }

    TopicRecord deadLetter(String reason, int offset) {
        ObjectNode d = JSON.createObjectNode()
                .put("reason", reason)
                .put("detail", "as the fixture says")
                .put("topic", INPUT)
                .put("partition", 0)
                .put("offset", offset)
                .put("record_ts", input.get(offset).timestamp())
                .put("raw", new String(input.get(offset).value(), StandardCharsets.UTF_8));
        return new TopicRecord(new Coordinates(DEAD_LETTERS, 0, deadLetters.size()), bytes(d.toString()));
    }

    /** The lake's row of the record at {@code offset}, holding the event {@code json}. */
    LakeRow lakeRow(int offset, String json) {
        ObjectNode p = (ObjectNode) read(json);
        ObjectNode attributes = Payloads.attributes(p);
        return new LakeRow(
                at(offset),
                p.get("event_id").asText(),
                p.get("event_type").asText(),
                p.get("event_ts").asLong(),
                p.get("campaign_id").asText(),
                p.get("channel_id").asText(),
                p.get("cost_micros").asLong(),
                input.get(offset).timestamp(),
                Payloads.text(p, "request_id"),
                attributes == null ? null : attributes.toString());
    }

    static Coordinates at(int offset) {
        return new Coordinates(INPUT, 0, offset);
    }

    static String event(String id, String type, long afterT0, String campaign, String channel, long cost, String more) {
        return "{\"event_id\":\"" + id + "\",\"event_type\":\"" + type + "\",\"event_ts\":" + (T0 + afterT0)
                + ",\"campaign_id\":\"" + campaign + "\",\"channel_id\":\"" + channel + "\",\"cost_micros\":" + cost
                + more + "}";
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static com.fasterxml.jackson.databind.JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    private static long recordTs(String json) {
        return read(json).get("event_ts").asLong() + DELAY;
    }
}
