package dev.recount.core.sets;

/** What a field of an event holds, as far as metric sets care. */
public enum FieldType {
    /** Text: ids, the event type and string attributes. Only these can be dimensions or filters. */
    STRING,
    /** A whole number in [0, 2^63): cost_micros and integer attributes. Only these can be summed. */
    INTEGER;

    /** The word the definitions file uses. */
    public String word() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
