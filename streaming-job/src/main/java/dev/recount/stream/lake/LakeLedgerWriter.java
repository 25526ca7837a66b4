package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;

/**
 * Counts events per lake hour between two checkpoints. Consecutive events mostly fall into the same hour, so the
 * counter of the last hour is kept at hand instead of looking the hour up per event.
 */
final class LakeLedgerWriter implements CommittingSinkWriter<AdEvent, LakeLedgerCommittable> {
    private TreeMap<Long, long[]> counts = new TreeMap<>();
    private long currentHour = Long.MIN_VALUE;
    private long[] current;

    @Override
    public void write(AdEvent event, Context context) {
        long hour = LakeLayout.hourStart(event.eventTs);
        if (hour != currentHour || current == null) {
            current = counts.computeIfAbsent(hour, h -> new long[1]);
            currentHour = hour;
        }
        current[0]++;
    }

    @Override
    public void flush(boolean endOfInput) {
        // Counts leave with prepareCommit(), which Flink calls at every checkpoint and at end of input.
    }

    @Override
    public Collection<LakeLedgerCommittable> prepareCommit() {
        if (counts.isEmpty()) return List.of();
        TreeMap<Long, Long> rowsByHour = new TreeMap<>();
        counts.forEach((hour, n) -> rowsByHour.put(hour, n[0]));
        counts = new TreeMap<>();
        current = null;
        return List.of(new LakeLedgerCommittable(UUID.randomUUID(), rowsByHour));
    }

    @Override
    public void close() {}
}
