package dev.recount.core.sets;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every field a metric set may name: the contract's (CONTRACT §1) and the declared {@link Attribute}s, in that order.
 * Built once per definitions; a string attribute's slot is its position among the string attributes, an integer
 * attribute's among the integer ones.
 */
public final class EventFields implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The contract's fields, by the names events carry them under. */
    public static final List<String> CONTRACT_FIELDS =
            List.of("event_id", "event_type", "event_ts", "campaign_id", "channel_id", "cost_micros", "request_id");

    private final Map<String, EventField> byName;
    private final List<Attribute> attributes;
    private final int stringAttributes;
    private final int integerAttributes;

    public EventFields(List<Attribute> attributes) {
        this.attributes = List.copyOf(attributes);
        Map<String, EventField> fields = new LinkedHashMap<>();
        put(fields, "event_id", FieldType.STRING, EventField.Source.EVENT_ID);
        put(fields, "event_type", FieldType.STRING, EventField.Source.EVENT_TYPE);
        put(fields, "event_ts", FieldType.INTEGER, EventField.Source.EVENT_TS);
        put(fields, "campaign_id", FieldType.STRING, EventField.Source.CAMPAIGN_ID);
        put(fields, "channel_id", FieldType.STRING, EventField.Source.CHANNEL_ID);
        put(fields, "cost_micros", FieldType.INTEGER, EventField.Source.COST_MICROS);
        put(fields, "request_id", FieldType.STRING, EventField.Source.REQUEST_ID);
        int strings = 0;
        int integers = 0;
        for (Attribute a : this.attributes) {
            if (fields.containsKey(a.name())) {
                throw new IllegalArgumentException("attribute " + a.name() + " has the name of a contract field");
            }
            boolean string = a.type() == FieldType.STRING;
            fields.put(
                    a.name(),
                    new EventField(
                            a.name(),
                            a.type(),
                            string ? EventField.Source.STRING_ATTRIBUTE : EventField.Source.INTEGER_ATTRIBUTE,
                            string ? strings++ : integers++));
        }
        this.byName = Collections.unmodifiableMap(fields);
        this.stringAttributes = strings;
        this.integerAttributes = integers;
    }

    private static void put(Map<String, EventField> fields, String name, FieldType type, EventField.Source source) {
        fields.put(name, new EventField(name, type, source, -1));
    }

    /** The field named {@code name}, if events have one. */
    public Optional<EventField> field(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every field's name, contract fields first. */
    public List<String> names() {
        return new ArrayList<>(byName.keySet());
    }

    public List<Attribute> attributes() {
        return attributes;
    }

    /** How many string attributes an event carries ({@code AdEvent.stringAttributes.length}). */
    public int stringAttributeCount() {
        return stringAttributes;
    }

    /** How many integer attributes an event carries ({@code AdEvent.integerAttributes.length}). */
    public int integerAttributeCount() {
        return integerAttributes;
    }
}
