package dev.recount.stream.source;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.metrics.groups.SplitEnumeratorMetricGroup;

/**
 * Finishes a bounded Kafka source that was restored from a checkpoint.
 *
 * <p>The Kafka connector's enumerator (5.0.0) tells its readers "no more splits" only after a partition discovery
 * that found new partitions. Restored from a checkpoint, every partition is already assigned, discovery finds
 * nothing new, and the readers wait for splits forever: a restored --bounded run would never end. This wrapper
 * watches the enumerator's asynchronous discovery calls; once they are all done, nothing more will be assigned,
 * and it signals "no more splits" to every reader itself (again to readers that register later, after the
 * enumerator has handed them their pending splits). A second signal where the enumerator did send one is harmless.
 */
final class RestoredBoundedEnumerator<S extends SourceSplit, C> implements SplitEnumerator<S, C> {
    private final SplitEnumerator<S, C> delegate;
    private final SplitEnumeratorContext<S> context;
    private int pendingCalls;
    private boolean startedDiscovery;
    private boolean discoveryDone;

    RestoredBoundedEnumerator(
            SplitEnumeratorContext<S> context, Function<SplitEnumeratorContext<S>, SplitEnumerator<S, C>> restore) {
        this.context = context;
        this.delegate = restore.apply(new Tracking());
    }

    @Override
    public void start() {
        delegate.start();
        if (!startedDiscovery) allDiscoveryDone();
    }

    @Override
    public void addReader(int subtaskId) {
        delegate.addReader(subtaskId);
        if (discoveryDone) context.signalNoMoreSplits(subtaskId);
    }

    private void allDiscoveryDone() {
        discoveryDone = true;
        context.registeredReaders().keySet().forEach(context::signalNoMoreSplits);
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {
        delegate.handleSplitRequest(subtaskId, requesterHostname);
    }

    @Override
    public void addSplitsBack(List<S> splits, int subtaskId) {
        delegate.addSplitsBack(splits, subtaskId);
    }

    @Override
    public C snapshotState(long checkpointId) throws Exception {
        return delegate.snapshotState(checkpointId);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        delegate.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void handleSourceEvent(int subtaskId, SourceEvent event) {
        delegate.handleSourceEvent(subtaskId, event);
    }

    @Override
    public void close() throws IOException {
        try {
            delegate.close();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /** The context the Kafka enumerator sees: counts its one-shot async calls (bounded: no periodic discovery). */
    private final class Tracking implements SplitEnumeratorContext<S> {
        @Override
        public <T> void callAsync(Callable<T> callable, BiConsumer<T, Throwable> handler) {
            startedDiscovery = true;
            pendingCalls++;
            context.callAsync(callable, (result, error) -> {
                try {
                    handler.accept(result, error);
                } finally {
                    // The handler may have started a follow-up call; only when none is left is discovery over.
                    if (--pendingCalls == 0 && error == null) allDiscoveryDone();
                }
            });
        }

        @Override
        public <T> void callAsync(
                Callable<T> callable, BiConsumer<T, Throwable> handler, long initialDelay, long period) {
            context.callAsync(callable, handler, initialDelay, period);
        }

        @Override
        public SplitEnumeratorMetricGroup metricGroup() {
            return context.metricGroup();
        }

        @Override
        public void sendEventToSourceReader(int subtaskId, SourceEvent event) {
            context.sendEventToSourceReader(subtaskId, event);
        }

        @Override
        public void sendEventToSourceReader(int subtaskId, int attemptNumber, SourceEvent event) {
            context.sendEventToSourceReader(subtaskId, attemptNumber, event);
        }

        @Override
        public int currentParallelism() {
            return context.currentParallelism();
        }

        @Override
        public Map<Integer, ReaderInfo> registeredReaders() {
            return context.registeredReaders();
        }

        @Override
        public Map<Integer, Map<Integer, ReaderInfo>> registeredReadersOfAttempts() {
            return context.registeredReadersOfAttempts();
        }

        @Override
        public void assignSplits(SplitsAssignment<S> newSplitAssignments) {
            context.assignSplits(newSplitAssignments);
        }

        @Override
        public void signalNoMoreSplits(int subtask) {
            context.signalNoMoreSplits(subtask);
        }

        @Override
        public void runInCoordinatorThread(Runnable runnable) {
            context.runInCoordinatorThread(runnable);
        }

        @Override
        public void setIsProcessingBacklog(boolean isProcessingBacklog) {
            context.setIsProcessingBacklog(isProcessingBacklog);
        }
    }
}
