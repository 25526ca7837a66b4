package dev.recount.bench.kstreams;

import dev.recount.core.event.AdEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the first copy of each event_id (input keyed, and so partitioned, by event_id): a key-value store maps each
 * id seen to its event time, and a stream-time punctuation every {@code horizon} forgets the ids whose event time
 * lies more than {@code horizon} behind stream time (so an id is remembered for at least the horizon, at most twice
 * it).
 *
 * <p>Not the window-store pattern of Kafka Streams' examples ({@code fetch(id, ts - horizon, ts + horizon)}): the
 * in-memory window store keeps one segment per distinct timestamp, so that fetch walks every timestamp in the range
 * and a replay with a long horizon became quadratic (a run was stopped after 3 minutes of 2 busy cores).
 */
final class DropDuplicateIds implements Processor<String, AdEvent, String, AdEvent> {
    static final String STORE = "seen-event-ids";
    private final Duration horizon;
    private final RunProgress progress;
    private ProcessorContext<String, AdEvent> context;
    private KeyValueStore<String, Long> seen;

    DropDuplicateIds(Duration horizon, RunProgress progress) {
        this.horizon = horizon;
        this.progress = progress;
    }

    @Override
    public void init(ProcessorContext<String, AdEvent> context) {
        this.context = context;
        this.seen = context.getStateStore(STORE);
        context.schedule(horizon, PunctuationType.STREAM_TIME, this::forgetOlderThanHorizon);
    }

    @Override
    public void process(Record<String, AdEvent> record) {
        progress.idsLookedUp.increment();
        if (seen.get(record.key()) != null) return;
        seen.put(record.key(), record.timestamp());
        progress.unique.increment();
        context.forward(record);
    }

    private void forgetOlderThanHorizon(long streamTime) {
        long oldest = streamTime - horizon.toMillis();
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, Long> ids = seen.all()) {
            while (ids.hasNext()) {
                KeyValue<String, Long> id = ids.next();
                if (id.value < oldest) expired.add(id.key);
            }
        }
        expired.forEach(seen::delete);
    }
}
