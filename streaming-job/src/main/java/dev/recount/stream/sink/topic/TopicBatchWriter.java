package dev.recount.stream.sink.topic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * Collects the records of one checkpoint interval, serialized, and hands them to the committer as one
 * {@link TopicBatch} when the checkpoint is taken. Sends nothing itself: publication happens only for completed
 * checkpoints. Its state is the sequence number of the last batch it made.
 */
final class TopicBatchWriter<T> implements CommittingSinkWriter<T, TopicBatch>, StatefulSinkWriter<T, Long> {
    public static final String PENDING_RECORDS_METRIC = "pendingRecords";

    private final String lineage;
    private final TopicRecordSerializer<T> serializer;
    private long sequence;
    private List<TopicRecord> pending = new ArrayList<>();

    TopicBatchWriter(String lineage, long restoredSequence, TopicRecordSerializer<T> serializer, MetricGroup metrics) {
        this.lineage = lineage;
        this.sequence = restoredSequence;
        this.serializer = serializer;
        metrics.gauge(PENDING_RECORDS_METRIC, (Gauge<Integer>) () -> pending.size());
    }

    @Override
    public void write(T element, Context context) {
        pending.add(serializer.serialize(element));
    }

    @Override
    public void flush(boolean endOfInput) {
        // Records leave with prepareCommit(), at every checkpoint and at the end of input.
    }

    @Override
    public Collection<TopicBatch> prepareCommit() {
        if (pending.isEmpty()) return List.of();
        TopicBatch batch = new TopicBatch(lineage, ++sequence, pending);
        pending = new ArrayList<>();
        return List.of(batch);
    }

    @Override
    public List<Long> snapshotState(long checkpointId) {
        return List.of(sequence);
    }

    @Override
    public void close() {}
}
