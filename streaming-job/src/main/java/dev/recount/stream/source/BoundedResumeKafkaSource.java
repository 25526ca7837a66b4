package dev.recount.stream.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.kafka.common.TopicPartition;

/**
 * A bounded {@link KafkaSource} that can also resume an unbounded run's checkpoint.
 *
 * <p>The Kafka source keeps each partition's stopping offset in the split state of a checkpoint. Restoring a
 * checkpoint of an unbounded run (e.g. `stream`, stopped with Ctrl-C) in a `stream --bounded` run would restore
 * splits that never stop, and the bounded run would never end. This wrapper gives such splits the stopping offset
 * this run computed at its start (the latest offsets then); splits that already have one (from an interrupted
 * bounded run) keep it, so that run is finished where it was meant to end. A restored enumerator also needs
 * {@link RestoredBoundedEnumerator} to end at all.
 */
public final class BoundedResumeKafkaSource<T>
        implements Source<T, KafkaPartitionSplit, KafkaSourceEnumState>, ResultTypeQueryable<T> {
    private static final long serialVersionUID = 1L;

    private final KafkaSource<T> delegate;
    /** "topic|partition" → stopping offset: TopicPartition is serializable, but a plain map keeps this obvious. */
    private final HashMap<String, Long> stoppingOffsets;

    public BoundedResumeKafkaSource(KafkaSource<T> boundedDelegate, Map<TopicPartition, Long> stoppingOffsets) {
        this.delegate = Objects.requireNonNull(boundedDelegate, "boundedDelegate");
        if (boundedDelegate.getBoundedness() != Boundedness.BOUNDED) {
            throw new IllegalArgumentException("boundedDelegate must be a bounded KafkaSource");
        }
        this.stoppingOffsets = new HashMap<>();
        stoppingOffsets.forEach((tp, offset) -> this.stoppingOffsets.put(key(tp), offset));
    }

    private static String key(TopicPartition tp) {
        return tp.topic() + '|' + tp.partition();
    }

    KafkaPartitionSplit withStoppingOffset(KafkaPartitionSplit split) {
        if (split.getStoppingOffset().isPresent() || split.isMigrated()) return split;
        // A partition created after this run started: it stops at whatever is latest when it is assigned.
        long stop = stoppingOffsets.getOrDefault(key(split.getTopicPartition()), KafkaPartitionSplit.LATEST_OFFSET);
        return new KafkaPartitionSplit(split.getTopicPartition(), split.getStartingOffset(), stop);
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<T, KafkaPartitionSplit> createReader(SourceReaderContext context) throws Exception {
        return new Reader(delegate.createReader(context));
    }

    @Override
    public SplitEnumerator<KafkaPartitionSplit, KafkaSourceEnumState> createEnumerator(
            SplitEnumeratorContext<KafkaPartitionSplit> context) {
        return delegate.createEnumerator(context);
    }

    @Override
    public SplitEnumerator<KafkaPartitionSplit, KafkaSourceEnumState> restoreEnumerator(
            SplitEnumeratorContext<KafkaPartitionSplit> context, KafkaSourceEnumState checkpoint) {
        return new RestoredBoundedEnumerator<>(context, tracked -> {
            try {
                return delegate.restoreEnumerator(tracked, checkpoint);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Override
    public SimpleVersionedSerializer<KafkaPartitionSplit> getSplitSerializer() {
        return delegate.getSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<KafkaSourceEnumState> getEnumeratorCheckpointSerializer() {
        return delegate.getEnumeratorCheckpointSerializer();
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return delegate.getProducedType();
    }

    private final class Reader implements SourceReader<T, KafkaPartitionSplit> {
        private final SourceReader<T, KafkaPartitionSplit> reader;

        Reader(SourceReader<T, KafkaPartitionSplit> reader) {
            this.reader = reader;
        }

        @Override
        public void addSplits(List<KafkaPartitionSplit> splits) {
            List<KafkaPartitionSplit> bounded = new ArrayList<>(splits.size());
            for (KafkaPartitionSplit s : splits) bounded.add(withStoppingOffset(s));
            reader.addSplits(bounded);
        }

        @Override
        public void start() {
            reader.start();
        }

        @Override
        public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
            return reader.pollNext(output);
        }

        @Override
        public List<KafkaPartitionSplit> snapshotState(long checkpointId) {
            return reader.snapshotState(checkpointId);
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return reader.isAvailable();
        }

        @Override
        public void notifyNoMoreSplits() {
            reader.notifyNoMoreSplits();
        }

        @Override
        public void handleSourceEvents(SourceEvent event) {
            reader.handleSourceEvents(event);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            reader.notifyCheckpointComplete(checkpointId);
        }

        @Override
        public void notifyCheckpointAborted(long checkpointId) throws Exception {
            reader.notifyCheckpointAborted(checkpointId);
        }

        @Override
        public void pauseOrResumeSplits(Collection<String> toPause, Collection<String> toResume) {
            reader.pauseOrResumeSplits(toPause, toResume);
        }

        @Override
        public void close() throws Exception {
            reader.close();
        }
    }
}
