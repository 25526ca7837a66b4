package dev.recount.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.Truth;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What was sent, as the input topic holds it, judged by the oracle ({@code dev.recount.oracle}, which shares no code
 * with the pipeline): the truth of every metric set, and per record what must become of it — an invalid record a dead
 * letter of its reason, a valid one a lake row with its payload.
 */
final class Sent {
    /** One record of the input topic, as read back. */
    record InputRecord(Coordinates at, long timestamp, byte[] value) {}

    /**
     * A valid record: where it is, its record timestamp, its JSON object, its event id, and whether it is the copy the
     * oracle counted (the first valid copy of its id) or a later copy.
     */
    record Valid(Coordinates at, long timestamp, ObjectNode payload, String eventId, boolean counted) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<InputRecord> records;
    private final Definitions definitions;
    private final OracleSettings settings;
    private final Truth truth;
    private final Map<Coordinates, String> invalid;
    private final Map<Coordinates, Valid> valid;
    private final Map<String, List<Valid>> validById;

    private Sent(
            List<InputRecord> records,
            Definitions definitions,
            OracleSettings settings,
            Truth truth,
            Map<Coordinates, String> invalid,
            Map<Coordinates, Valid> valid) {
        this.records = List.copyOf(records);
        this.definitions = definitions;
        this.settings = settings;
        this.truth = truth;
        this.invalid = invalid;
        this.valid = valid;
        Map<String, List<Valid>> byId = new HashMap<>();
        valid.values()
                .forEach(v -> byId.computeIfAbsent(v.eventId(), id -> new ArrayList<>())
                        .add(v));
        this.validById = byId;
    }

    /**
     * The records judged in the order they were sent: by record timestamp, then where they are (the order matters
     * only for which copy of an event id counts; the suite's copies of an id are the same bytes).
     */
    static Sent judge(List<InputRecord> records, Definitions definitions, OracleSettings settings) {
        Oracle oracle = new Oracle(definitions, settings);
        Map<Coordinates, String> invalid = new TreeMap<>();
        Map<Coordinates, Valid> valid = new TreeMap<>();
        List<InputRecord> inOrder = new ArrayList<>(records);
        inOrder.sort(Comparator.comparingLong(InputRecord::timestamp).thenComparing(InputRecord::at));
        for (InputRecord r : inOrder) {
            Oracle.Verdict verdict = oracle.accept(r.value(), r.timestamp());
            if (verdict.isInvalid()) {
                invalid.put(r.at(), verdict.reason());
                continue;
            }
            ObjectNode payload;
            try {
                payload = (ObjectNode) JSON.readTree(r.value());
            } catch (IOException e) {
                throw new IllegalStateException("the oracle found " + r.at() + " valid, but it is not JSON", e);
            }
            valid.put(
                    r.at(),
                    new Valid(
                            r.at(),
                            r.timestamp(),
                            payload,
                            payload.get("event_id").textValue(),
                            verdict == Oracle.Verdict.COUNTED));
        }
        return new Sent(records, definitions, settings, oracle.truth(), invalid, valid);
    }

    /** The input topic's records, as read. */
    List<InputRecord> records() {
        return records;
    }

    Definitions definitions() {
        return definitions;
    }

    OracleSettings settings() {
        return settings;
    }

    /** The truth of every set: what the pipeline must end up with. */
    Truth truth() {
        return truth;
    }

    /** The invalid records and their dead-letter reasons. */
    Map<Coordinates, String> invalid() {
        return invalid;
    }

    /** The valid records, first copies and later ones: every one must be in the lake, once. */
    Map<Coordinates, Valid> valid() {
        return valid;
    }

    /** The valid copies of {@code eventId}; empty when none was sent. */
    List<Valid> copiesOf(String eventId) {
        return validById.getOrDefault(eventId, List.of());
    }
}
