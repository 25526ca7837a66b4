package dev.recount.core.event;

import java.util.Locale;
import java.util.Optional;

/** The three event types of CONTRACT §1, with their wire names. */
public enum EventType {
    IMPRESSION("impression"),
    CLICK("click"),
    CONVERSION("conversion");

    private final String wireName;

    EventType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** Exact, case-sensitive match on the wire name: "Click" is as invalid as "tap". */
    /** values() clones its array on every call; this runs once per event. */
    private static final EventType[] ALL = values();

    public static Optional<EventType> fromWire(String name) {
        for (EventType t : ALL) {
            if (t.wireName.equals(name)) return Optional.of(t);
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return wireName.toLowerCase(Locale.ROOT);
    }
}
