package dev.recount.stream.window;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.MetricsAccumulator;
import java.io.IOException;
import java.util.Arrays;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The live windows of one (campaign, channel) key in {@link WindowMetricsOperator}: per window its start, its sums
 * (core's {@link MetricsAccumulator}), its last revision (0 = not fired yet) and whether it holds sums not fired
 * yet. A handful of windows per key (the open ones and those within allowed lateness), in small parallel arrays:
 * one state entry per key instead of Flink's window operator's entry per key and window, plus two timers each.
 */
public final class KeyWindows {
    private static final int SUMS = Metric.values().length;

    long[] starts = new long[2];
    MetricsAccumulator[] sums = new MetricsAccumulator[2];
    int[] revisions = new int[2];
    boolean[] pending = new boolean[2];
    int size;
    /** The key's object as the state entry holds it, shared with the operator's index; not serialized. */
    transient Object key;

    /** The index of the window starting at {@code start}, or -1. */
    int find(long start) {
        for (int i = 0; i < size; i++) if (starts[i] == start) return i;
        return -1;
    }

    /** Adds a window (no sums, not fired) and returns its index. */
    int add(long start) {
        if (size == starts.length) {
            int n = size * 2;
            starts = Arrays.copyOf(starts, n);
            sums = Arrays.copyOf(sums, n);
            revisions = Arrays.copyOf(revisions, n);
            pending = Arrays.copyOf(pending, n);
        }
        starts[size] = start;
        sums[size] = new MetricsAccumulator();
        revisions[size] = 0;
        pending[size] = false;
        return size++;
    }

    /** Removes the window at {@code i} (the last one takes its place). */
    void remove(int i) {
        int last = --size;
        starts[i] = starts[last];
        sums[i] = sums[last];
        revisions[i] = revisions[last];
        pending[i] = pending[last];
        sums[last] = null;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KeyWindows k) || k.size != size) return false;
        for (int i = 0; i < size; i++) {
            int j = k.find(starts[i]);
            if (j < 0
                    || k.revisions[j] != revisions[i]
                    || k.pending[j] != pending[i]
                    || !k.sums[j].toMetrics().equals(sums[i].toMetrics())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return size;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("KeyWindows{");
        for (int i = 0; i < size; i++) {
            b.append(i == 0 ? "" : ", ")
                    .append(starts[i])
                    .append(" r")
                    .append(revisions[i])
                    .append(pending[i] ? "*" : "")
                    .append(' ')
                    .append(sums[i].toMetrics());
        }
        return b.append('}').toString();
    }

    /** Per window: start, revision, pending, the accumulator's sums and spend carry. */
    public static final class Serializer extends TypeSerializerSingleton<KeyWindows> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public KeyWindows createInstance() {
            return new KeyWindows();
        }

        @Override
        public KeyWindows copy(KeyWindows from) {
            KeyWindows c = new KeyWindows();
            int n = Math.max(from.size, 1);
            c.starts = Arrays.copyOf(from.starts, n);
            c.revisions = Arrays.copyOf(from.revisions, n);
            c.pending = Arrays.copyOf(from.pending, n);
            c.sums = new MetricsAccumulator[n];
            for (int i = 0; i < from.size; i++) c.sums[i] = new MetricsAccumulator().merge(from.sums[i]);
            c.size = from.size;
            c.key = from.key;
            return c;
        }

        @Override
        public KeyWindows copy(KeyWindows from, KeyWindows reuse) {
            return copy(from);
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(KeyWindows w, DataOutputView out) throws IOException {
            out.writeInt(w.size);
            for (int i = 0; i < w.size; i++) {
                out.writeLong(w.starts[i]);
                out.writeInt(w.revisions[i]);
                out.writeBoolean(w.pending[i]);
                for (int m = 0; m < SUMS; m++) out.writeLong(w.sums[i].sums[m]);
                out.writeLong(w.sums[i].spendCarry);
            }
        }

        @Override
        public KeyWindows deserialize(DataInputView in) throws IOException {
            int n = in.readInt();
            if (n < 0 || n > 1 << 20) throw new IOException("corrupt window state: " + n + " windows");
            KeyWindows w = new KeyWindows();
            for (int k = 0; k < n; k++) {
                int i = w.add(in.readLong());
                w.revisions[i] = in.readInt();
                w.pending[i] = in.readBoolean();
                for (int m = 0; m < SUMS; m++) w.sums[i].sums[m] = in.readLong();
                w.sums[i].spendCarry = in.readLong();
            }
            return w;
        }

        @Override
        public KeyWindows deserialize(KeyWindows reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            serialize(deserialize(source), target);
        }

        @Override
        public TypeSerializerSnapshot<KeyWindows> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    /** Serializer snapshot: no parameters; a new format would need a new snapshot version. */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<KeyWindows> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
