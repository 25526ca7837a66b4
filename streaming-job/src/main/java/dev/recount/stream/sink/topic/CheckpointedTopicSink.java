package dev.recount.stream.sink.topic;

import java.util.Collection;
import java.util.Objects;
import java.util.Properties;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Writes a stream to a Kafka topic exactly once, in step with the job's checkpoints: what arrives between two
 * checkpoints is published as one Kafka transaction after the second one completes ({@link TopicBatchWriter},
 * {@link TopicBatchCommitter}). read_committed consumers see a checkpoint's records all at once, never the records
 * of a checkpoint that did not complete, and never a record twice.
 *
 * <p>Why not Flink's KafkaSink: it keeps a transaction open from one checkpoint to the next and, after a crash,
 * resumes it by producer id and epoch. On brokers with Kafka's transaction protocol v2 (the default of Kafka 4)
 * every commit bumps the epoch, so re-committing an already committed transaction during recovery is answered
 * "producer fenced" and logged as possible data loss; and a transaction left open longer than its timeout (a job
 * down for longer than that) is aborted by the broker and its records are gone. Here the records live in the
 * checkpoint until a transaction that only lasts the publication has committed them, and a marker committed in
 * that transaction ({@link PublicationMarker}) tells a restarted committer which batches are already out.
 *
 * <p>Runs with parallelism 1 (one ordered publication per topic; side outputs are a small share of the input).
 */
public final class CheckpointedTopicSink<T>
        implements Sink<T>, SupportsCommitter<TopicBatch>, SupportsWriterState<T, Long> {
    private static final long serialVersionUID = 1L;

    private final String bootstrapServers;
    private final String topic;
    private final String publicationId;
    private final String lineage;
    private final TopicRecordSerializer<T> serializer;
    private final Properties producerOverrides;

    /**
     * @param publicationId the transactional id and marker group: unique per job and topic across the Kafka
     *                      cluster, stable across restarts of the same job
     * @param lineage       the chain of runs this one continues (a fresh start begins a new one)
     */
    public CheckpointedTopicSink(
            String bootstrapServers,
            String topic,
            String publicationId,
            String lineage,
            TopicRecordSerializer<T> serializer,
            Properties producerOverrides) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.publicationId = Objects.requireNonNull(publicationId, "publicationId");
        this.lineage = Objects.requireNonNull(lineage, "lineage");
        this.serializer = Objects.requireNonNull(serializer, "serializer");
        this.producerOverrides = new Properties();
        this.producerOverrides.putAll(Objects.requireNonNull(producerOverrides, "producerOverrides"));
    }

    public String topic() {
        return topic;
    }

    @Override
    public StatefulSinkWriter<T, Long> createWriter(WriterInitContext context) {
        requireParallelismOne(context);
        return new TopicBatchWriter<>(lineage, 0, serializer, context.metricGroup());
    }

    @Override
    public StatefulSinkWriter<T, Long> restoreWriter(WriterInitContext context, Collection<Long> recoveredState) {
        requireParallelismOne(context);
        long sequence = 0;
        for (Long s : recoveredState) sequence = Math.max(sequence, s);
        return new TopicBatchWriter<>(lineage, sequence, serializer, context.metricGroup());
    }

    private void requireParallelismOne(WriterInitContext context) {
        int parallelism = context.getTaskInfo().getNumberOfParallelSubtasks();
        if (parallelism != 1) {
            throw new IllegalStateException(
                    "the sink to " + topic + " must run with parallelism 1, not " + parallelism);
        }
    }

    @Override
    public Committer<TopicBatch> createCommitter(CommitterInitContext context) {
        return new TopicBatchCommitter(
                bootstrapServers, topic, publicationId, producerOverrides, context.metricGroup());
    }

    @Override
    public SimpleVersionedSerializer<TopicBatch> getCommittableSerializer() {
        return new TopicBatch.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<Long> getWriterStateSerializer() {
        return new SequenceSerializer();
    }

    /** The writer's state: the sequence number of its last batch. */
    static final class SequenceSerializer implements SimpleVersionedSerializer<Long> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Long sequence) throws java.io.IOException {
            DataOutputSerializer out = new DataOutputSerializer(8);
            out.writeLong(sequence);
            return out.getCopyOfBuffer();
        }

        @Override
        public Long deserialize(int version, byte[] bytes) throws java.io.IOException {
            if (version != 1) throw new java.io.IOException("unknown sequence state version " + version);
            return new DataInputDeserializer(bytes).readLong();
        }
    }
}
