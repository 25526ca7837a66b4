package dev.recount.stream.source;

import dev.recount.core.event.InvalidReason;
import java.util.Arrays;
import java.util.Objects;

/**
 * An invalid input record on its way to the dead-letter topic: the dead-letter value (already rendered by core's
 * {@link dev.recount.core.event.DeadLetterRecord}) and the original record key, so the dead-letter topic is
 * partitioned like the input.
 *
 * <p>A Flink POJO (public fields, no-arg constructor), so it needs no Kryo.
 */
public final class DeadLetter {
    public InvalidReason reason;
    public String json;
    /** The input record's key, cut as {@link dev.recount.core.event.DeadLetterRecord#key} cuts it; may be null. */
    public byte[] key;

    public DeadLetter() {}

    public DeadLetter(InvalidReason reason, String json, byte[] key) {
        this.reason = Objects.requireNonNull(reason, "reason");
        this.json = Objects.requireNonNull(json, "json");
        this.key = key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeadLetter d
                && Objects.equals(reason, d.reason)
                && Objects.equals(json, d.json)
                && Arrays.equals(key, d.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(reason, json) * 31 + Arrays.hashCode(key);
    }

    @Override
    public String toString() {
        return "DeadLetter{" + reason.wireName() + ' ' + (json.length() > 200 ? json.substring(0, 200) + "..." : json)
                + '}';
    }
}
