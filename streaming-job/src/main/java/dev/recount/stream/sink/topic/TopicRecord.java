package dev.recount.stream.sink.topic;

import java.util.Arrays;
import java.util.Objects;

/** One record for a Kafka topic, already serialized: key (may be null) and value. */
public record TopicRecord(byte[] key, byte[] value) {
    public TopicRecord {
        Objects.requireNonNull(value, "value");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TopicRecord r && Arrays.equals(key, r.key) && Arrays.equals(value, r.value);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return "TopicRecord{" + (key == null ? 0 : key.length) + " key bytes, " + value.length + " value bytes}";
    }
}
