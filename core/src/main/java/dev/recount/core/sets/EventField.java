package dev.recount.core.sets;

import dev.recount.core.event.AdEvent;
import java.io.Serializable;
import java.util.Objects;

/**
 * A field of a valid event as metric sets see it: a contract field or a declared {@link Attribute}, with the way to
 * read its value from an {@link AdEvent}. Reading is a switch and an array index: it runs per event and set.
 */
public final class EventField implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Where the value lives in an {@link AdEvent}. */
    public enum Source {
        EVENT_ID,
        EVENT_TYPE,
        EVENT_TS,
        CAMPAIGN_ID,
        CHANNEL_ID,
        COST_MICROS,
        REQUEST_ID,
        /** {@link AdEvent#stringAttributes}{@code [slot]} */
        STRING_ATTRIBUTE,
        /** {@link AdEvent#integerAttributes}{@code [slot]} */
        INTEGER_ATTRIBUTE
    }

    private final String name;
    private final FieldType type;
    private final Source source;
    private final int slot;

    EventField(String name, FieldType type, Source source, int slot) {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        this.source = Objects.requireNonNull(source, "source");
        this.slot = slot;
    }

    public String name() {
        return name;
    }

    public FieldType type() {
        return type;
    }

    public Source source() {
        return source;
    }

    /** True for a declared attribute, false for a contract field. */
    public boolean isAttribute() {
        return source == Source.STRING_ATTRIBUTE || source == Source.INTEGER_ATTRIBUTE;
    }

    /**
     * Why this field cannot be a dimension, or null when it can: only string fields every valid event has, and not
     * the per-event ids (a dimension of event_id or request_id makes one row per event).
     */
    public String dimensionProblem() {
        if (type != FieldType.STRING) return name + " is an integer field; dimensions are string fields";
        if (source == Source.EVENT_ID || source == Source.REQUEST_ID) {
            return name + " identifies single events; a dimension of it would make one row per event";
        }
        return null;
    }

    /** The value of a string field (never null: absent attributes have taken their default). */
    public String text(AdEvent e) {
        return switch (source) {
            case EVENT_TYPE -> e.eventType.wireName();
            case CAMPAIGN_ID -> e.campaignId;
            case CHANNEL_ID -> e.channelId;
            case STRING_ATTRIBUTE -> e.stringAttributes[slot];
            case EVENT_ID -> e.eventId;
            case REQUEST_ID -> e.requestId == null ? "" : e.requestId;
            default -> throw new IllegalStateException(name + " is not a string field");
        };
    }

    /** The value of an integer field. */
    public long number(AdEvent e) {
        return switch (source) {
            case COST_MICROS -> e.costMicros;
            case INTEGER_ATTRIBUTE -> e.integerAttributes[slot];
            case EVENT_TS -> e.eventTs;
            default -> throw new IllegalStateException(name + " is not an integer field");
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EventField f && f.name.equals(name) && f.source == source && f.slot == slot;
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return name;
    }
}
