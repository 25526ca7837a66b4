package dev.recount.oracle;

import java.util.Map;

/**
 * A valid event: its contract fields and its declared attributes (defaults applied), by field name. String fields
 * hold a {@code String}, integer fields a {@code Long}; {@code request_id} is absent when the event has none.
 */
public record Event(Map<String, Object> fields) {
    public Event {
        fields = Map.copyOf(fields);
    }

    public String eventId() {
        return text("event_id");
    }

    public String eventType() {
        return text("event_type");
    }

    public long eventTs() {
        return number("event_ts");
    }

    public long costMicros() {
        return number("cost_micros");
    }

    /** Null when the event has none. */
    public String requestId() {
        return text("request_id");
    }

    /** A string field's value; null for a field the event does not have. */
    public String text(String field) {
        return (String) fields.get(field);
    }

    public long number(String field) {
        return (Long) fields.get(field);
    }
}
