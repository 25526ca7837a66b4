package dev.recount.stream.testutils;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * A sink that hands what a job wrote back to the test, for jobs run by a Flink MiniCluster in the test's own JVM.
 *
 * <p>Flink serializes a sink into the job and its writers run on task threads, so the only way back is shared
 * memory: a process-wide map from a per-sink random id to that sink's output. Every sink has its own id, so
 * concurrent tests never see each other's records; {@link #close()} removes the output.
 */
public final class CollectingSink<T> implements Sink<T>, AutoCloseable {
    private static final long serialVersionUID = 1L;
    private static final Map<String, Queue<Object>> OUTPUTS = new ConcurrentHashMap<>();

    private final String id;

    /** @param name what it collects, for messages only */
    public CollectingSink(String name) {
        this.id = Objects.requireNonNull(name, "name") + "-" + UUID.randomUUID();
        OUTPUTS.put(id, new ConcurrentLinkedQueue<>());
    }

    /** What the writers wrote so far, in the order they wrote it (one writer at parallelism 1). */
    @SuppressWarnings("unchecked")
    public List<T> collected() {
        return List.copyOf((Queue<T>) (Queue<?>) output(id));
    }

    @Override
    public void close() {
        OUTPUTS.remove(id);
    }

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
        Queue<Object> output = output(id);
        return new SinkWriter<>() {
            @Override
            public void write(T element, Context ctx) {
                output.add(element);
            }

            @Override
            public void flush(boolean endOfInput) {}

            @Override
            public void close() {}
        };
    }

    private static Queue<Object> output(String id) {
        Queue<Object> output = OUTPUTS.get(id);
        if (output == null) {
            throw new IllegalStateException("no output for sink " + id + ": closed, or not in this JVM");
        }
        return output;
    }
}
