package dev.recount.oracle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What the records sent must become: every set's {@link SetTruth}, and the dead letters by reason.
 *
 * @param records         every record judged
 * @param uniqueEvents    event_ids counted (their first valid copy)
 * @param duplicates      valid copies of an event_id already counted
 * @param invalidByReason invalid records by dead-letter reason (malformed, schema, timestamp), only those that occur
 */
public record Truth(
        List<SetTruth> sets, Map<String, Long> invalidByReason, long records, long uniqueEvents, long duplicates) {
    public Truth {
        sets = List.copyOf(sets);
        invalidByReason = Map.copyOf(invalidByReason);
    }

    public SetTruth set(String name) {
        return sets.stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no set " + name));
    }

    public long invalidTotal() {
        return invalidByReason.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Writes {@code <set>.csv}, and {@code <set>.attribution.csv} for a set with attribution, into {@code dir}. */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        for (SetTruth s : sets) {
            Files.writeString(dir.resolve(s.name() + ".csv"), s.csv(), StandardCharsets.UTF_8);
            if (s.attribution() != null) {
                Files.writeString(
                        dir.resolve(s.name() + ".attribution.csv"), s.attributionCsv(), StandardCharsets.UTF_8);
            }
        }
    }
}
