package dev.recount.core.event;

/** Why a record went to the dead-letter topic (CONTRACT §1). */
public enum InvalidReason {
    /** Not UTF-8, not JSON, or not a JSON object. */
    MALFORMED,
    /** A required field is missing, empty, of the wrong type or out of range. */
    SCHEMA,
    /** event_ts outside [record_ts - max-past, record_ts + max-future]. */
    TIMESTAMP;

    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
