package dev.recount.bench.kstreams;

import dev.recount.core.event.AdEvent;
import java.time.Duration;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Keeps the first copy of each event_id (input keyed, and so partitioned, by event_id), the de-duplication pattern
 * of Kafka Streams' own examples: a window store remembers each id at its event time; a copy whose id is in the
 * store within {@code horizon} either side of its event time is dropped. The store's retention is the horizon, so
 * ids are forgotten by stream time (segments dropped as stream time passes), never by a scan.
 *
 * <p>Copies of one event carry the same event time; a "copy" whose event time differs from the first by more than
 * the horizon would count again here, where recount keeps the first copy whatever its event time.
 */
final class DropDuplicateIds implements Processor<String, AdEvent, String, AdEvent> {
    static final String STORE = "seen-event-ids";
    private final long horizonMillis;
    private final RunProgress progress;
    private ProcessorContext<String, AdEvent> context;
    private WindowStore<String, Long> seen;

    DropDuplicateIds(Duration horizon, RunProgress progress) {
        this.horizonMillis = horizon.toMillis();
        this.progress = progress;
    }

    @Override
    public void init(ProcessorContext<String, AdEvent> context) {
        this.context = context;
        this.seen = context.getStateStore(STORE);
    }

    @Override
    public void process(Record<String, AdEvent> record) {
        progress.idsLookedUp.increment();
        long eventTs = record.timestamp();
        try (WindowStoreIterator<Long> copies = seen.fetch(record.key(), eventTs - horizonMillis, eventTs + horizonMillis)) {
            if (copies.hasNext()) return;
        }
        seen.put(record.key(), eventTs, eventTs);
        progress.unique.increment();
        context.forward(record);
    }
}
