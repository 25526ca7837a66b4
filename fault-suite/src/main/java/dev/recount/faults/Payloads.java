package dev.recount.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Comparator;
import java.util.List;

/**
 * What the outputs must hold of a valid record's JSON object, by docs/contract.md: the backfill topic's {@code event}
 * is the event with every field it carried ({@code request_id} omitted when null); the lake's {@code attributes}
 * column is every top-level field beyond the contract's, as sent (null when there is none).
 */
final class Payloads {
    /** The contract's fields (§1); every other top-level field is an attribute, declared or not. */
    static final List<String> CONTRACT_FIELDS =
            List.of("event_id", "event_type", "event_ts", "campaign_id", "channel_id", "cost_micros", "request_id");

    /** Numbers equal by value (a parser may give 5 as an int one time, a long the next), all else by equals. */
    private static final Comparator<JsonNode> SAME = (a, b) -> {
        if (a.equals(b)) return 0;
        if (a.isNumber() && b.isNumber()) return a.decimalValue().compareTo(b.decimalValue());
        return 1;
    };

    private Payloads() {}

    /** The {@code event} a backfill record of this record must carry. */
    static ObjectNode backfillEvent(ObjectNode sent) {
        ObjectNode event = sent.deepCopy();
        if (event.has("request_id") && event.get("request_id").isNull()) event.remove("request_id");
        return event;
    }

    /** The fields beyond the contract, as sent; null when there are none. */
    static ObjectNode attributes(ObjectNode sent) {
        ObjectNode beyond = sent.deepCopy();
        beyond.remove(CONTRACT_FIELDS);
        return beyond.isEmpty() ? null : beyond;
    }

    /** Whether two JSON values are the same, numbers compared by value. */
    static boolean same(JsonNode a, JsonNode b) {
        if (a == null || b == null) return a == b;
        return a.equals(SAME, b);
    }

    /** A text of a field, or null when it is absent or JSON null. */
    static String text(JsonNode object, String field) {
        JsonNode n = object.get(field);
        return n == null || n.isNull() ? null : n.asText();
    }
}
