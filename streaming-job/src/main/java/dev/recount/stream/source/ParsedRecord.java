package dev.recount.stream.source;

import dev.recount.core.event.AdEvent;
import java.util.Objects;

/**
 * One input record after validation: exactly one of {@link #event} (valid) and {@link #deadLetter} (invalid) is
 * set. Validation happens in the Kafka deserializer, before the record reaches the watermark generator, so an
 * invalid record can never move event time.
 */
public final class ParsedRecord {
    public AdEvent event;
    public DeadLetter deadLetter;

    public ParsedRecord() {}

    public static ParsedRecord valid(AdEvent event) {
        ParsedRecord r = new ParsedRecord();
        r.event = Objects.requireNonNull(event, "event");
        return r;
    }

    public static ParsedRecord invalid(DeadLetter deadLetter) {
        ParsedRecord r = new ParsedRecord();
        r.deadLetter = Objects.requireNonNull(deadLetter, "deadLetter");
        return r;
    }

    public boolean isValid() {
        return event != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ParsedRecord p
                && Objects.equals(event, p.event)
                && Objects.equals(deadLetter, p.deadLetter);
    }

    @Override
    public int hashCode() {
        return Objects.hash(event, deadLetter);
    }

    @Override
    public String toString() {
        return isValid() ? "valid " + event : "invalid " + deadLetter;
    }
}
