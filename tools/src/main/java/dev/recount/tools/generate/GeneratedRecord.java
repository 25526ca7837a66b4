package dev.recount.tools.generate;

import dev.recount.core.event.InvalidReason;

/**
 * One Kafka record the generator sends: explicit partition and timestamp (the simulated arrival time), so a
 * replay of the same profile produces the same topic content and the same validation verdicts.
 *
 * @param value          null for the "null value" invalid class
 * @param invalidReason  null for valid events and duplicates
 * @param eventTs        event time of a valid event or duplicate (else 0); used for the main/tail split
 */
public record GeneratedRecord(
        int partition, long arrivalTs, byte[] key, byte[] value, Kind kind, InvalidReason invalidReason, long eventTs) {
    public enum Kind {
        VALID,
        DUPLICATE,
        INVALID
    }
}
