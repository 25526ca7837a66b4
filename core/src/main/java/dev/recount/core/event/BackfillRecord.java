package dev.recount.core.event;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.sets.Identifiers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A too-late event on the backfill topic (CONTRACT §3): the event (with every field it carried), the metric sets it
 * was too late for with their windows, the watermark when it arrived, and where it was read. The batch layer's
 * {@code affected} mode reads these back. {@code window_start}/{@code window_end} repeat the first set's window: a
 * record of a release before metric sets has only those, and means the default set.
 *
 * @param sets the sets whose window of this event had closed, each at most once, never empty
 */
public record BackfillRecord(
        AdEvent event, List<SetWindow> sets, long watermark, String topic, int partition, long offset) {

    /** A metric set's window of the event: {@code [windowStart, windowEnd)}. */
    public record SetWindow(String set, long windowStart, long windowEnd) {
        public SetWindow {
            Objects.requireNonNull(set, "set");
            if (windowEnd <= windowStart) {
                throw new IllegalArgumentException(
                        "window_end must be after window_start, got [" + windowStart + ", " + windowEnd + ")");
            }
        }
    }

    public BackfillRecord {
        Objects.requireNonNull(event, "event");
        sets = List.copyOf(sets);
        if (sets.isEmpty()) throw new IllegalArgumentException("a backfill record names at least one metric set");
        if (sets.stream().map(SetWindow::set).distinct().count() != sets.size()) {
            throw new IllegalArgumentException("a backfill record names a metric set twice: " + sets);
        }
    }

    /** The first set's window start (what records before metric sets had alone). */
    public long windowStart() {
        return sets.get(0).windowStart();
    }

    public long windowEnd() {
        return sets.get(0).windowEnd();
    }

    /** The set names this record counts for. */
    public List<String> setNames() {
        return sets.stream().map(SetWindow::set).toList();
    }

    public String toJson() {
        ObjectNode n = EventJson.MAPPER.createObjectNode();
        n.set("event", EventJson.toNode(event));
        n.put("window_start", windowStart());
        n.put("window_end", windowEnd());
        ArrayNode setNodes = n.putArray("sets");
        for (SetWindow w : sets) {
            setNodes.addObject()
                    .put("set", w.set())
                    .put("window_start", w.windowStart())
                    .put("window_end", w.windowEnd());
        }
        n.put("watermark", watermark);
        n.put("topic", topic);
        n.put("partition", partition);
        n.put("offset", offset);
        return n.toString();
    }

    /**
     * Reads a record back from the bytes of a Kafka record's value: {@link #fromJson(String)} of them as UTF-8 text,
     * refusing bytes that are not (a lenient decoding would put U+FFFD in their place and name an event no lake holds).
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static BackfillRecord fromJson(byte[] value) {
        if (value == null) throw new IllegalArgumentException("not a backfill record: empty value");
        return fromJson(EventValidator.decodeUtf8(value)
                .orElseThrow(() -> new IllegalArgumentException("not a backfill record: its value is not UTF-8 text")));
    }

    /**
     * Reads a record back, holding its event to the event rules that do not depend on a record timestamp (ids, type,
     * integers, event_ts in the years every store holds, cost not negative) and its own fields to their types. The
     * stream writes only valid events here, but anyone who can write to the topic can write anything: a record with
     * event_ts near 2^63 made every {@code backfill affected} run fail on an overflow, and one whose event_ts was a
     * string named a 1970 window. Such a record is refused here, and the batch skips it as malformed. As for input
     * events (CONTRACT §1), a key given twice, at any level, and anything after the object make it malformed: which
     * copy would count is a guess. The message is one line of at most {@link #MAX_REASON} characters, control
     * characters escaped, whatever the record holds: it is logged, and kept for every record a run skips.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static BackfillRecord fromJson(String json) {
        try {
            JsonNode n = READER.readTree(json);
            if (n == null || !n.isObject()) throw new IllegalArgumentException("not a JSON object");
            JsonNode topicNode = n.required("topic");
            String topic = topicNode.asText();
            if (!topicNode.isTextual() || !KAFKA_TOPIC.matcher(topic).matches())
                throw new IllegalArgumentException("topic must be a Kafka topic name, got " + shown(topicNode));
            int partition = (int) integer(n, "partition", 0, Integer.MAX_VALUE);
            long offset = integer(n, "offset", 0, Long.MAX_VALUE);
            JsonNode event = n.required("event");
            // Judged against its own event_ts, so that only the rules of the event's content apply.
            JsonNode ts = event.get("event_ts");
            long eventTs = ts != null && ts.isIntegralNumber() && ts.canConvertToLong() ? ts.asLong() : 0;
            ValidationResult valid = CONTENT_RULES.validate(
                    EventJson.MAPPER.writeValueAsBytes(event), eventTs, topic, partition, offset);
            if (!valid.isValid()) throw new IllegalArgumentException("its event: " + valid.detail());
            AdEvent e = valid.event();
            e.recordTs = 0; // not on the topic: the record timestamp the event arrived with is not kept
            return new BackfillRecord(
                    e, sets(n), integer(n, "watermark", Long.MIN_VALUE, Long.MAX_VALUE), topic, partition, offset);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    IdRule.printable("not a backfill record: " + e.getMessage(), MAX_REASON), e);
        }
    }

    /** {@code sets}, or for a record of a release before metric sets, the default set's window it gives. */
    private static List<SetWindow> sets(JsonNode n) {
        JsonNode sets = n.get("sets");
        if (sets == null) {
            return List.of(new SetWindow(
                    "default",
                    integer(n, "window_start", Long.MIN_VALUE, Long.MAX_VALUE),
                    integer(n, "window_end", Long.MIN_VALUE, Long.MAX_VALUE)));
        }
        if (!sets.isArray() || sets.isEmpty()) throw new IllegalArgumentException("sets must be a non-empty array");
        List<SetWindow> out = new ArrayList<>();
        for (JsonNode s : sets) {
            if (!s.isObject()) throw new IllegalArgumentException("sets must hold objects, got " + shown(s));
            JsonNode name = s.get("set");
            if (name == null || !name.isTextual() || Identifiers.setNameProblem(name.textValue()) != null) {
                throw new IllegalArgumentException("set must be a metric set's name, got " + shown(name));
            }
            out.add(new SetWindow(
                    name.textValue(),
                    integer(s, "window_start", Long.MIN_VALUE, Long.MAX_VALUE),
                    integer(s, "window_end", Long.MIN_VALUE, Long.MAX_VALUE)));
        }
        return out;
    }

    /** The event rules without the record-timestamp rule: it is judged against its own event_ts, any cost allowed. */
    private static final EventValidator CONTENT_RULES =
            new EventValidator(Duration.ZERO, Duration.ZERO, Long.MAX_VALUE);

    /** The longest message {@link #fromJson} throws. */
    public static final int MAX_REASON = 300;

    private static final int SHOWN_VALUE = 64;

    private static final ObjectReader READER = EventJson.MAPPER
            .reader()
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** What Kafka accepts as a topic name. */
    private static final Pattern KAFKA_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private static long integer(JsonNode n, String field, long min, long max) {
        JsonNode v = n.required(field);
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max)
            throw new IllegalArgumentException(
                    field + " must be an integer in [" + min + ", " + max + "], got " + shown(v));
        return v.asLong();
    }

    /** A value as the message shows it: the start of its JSON, not a megabyte of it. */
    private static String shown(JsonNode v) {
        if (v == null) return "nothing";
        String json = v.toString();
        return json.length() <= SHOWN_VALUE ? json : json.substring(0, SHOWN_VALUE) + "...";
    }
}
