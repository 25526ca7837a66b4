package dev.recount.stream.window;

import dev.recount.core.sets.MeasureSums;
import java.io.IOException;
import java.util.Arrays;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The live windows of one window key (a set and its dimension values) in {@link WindowMetricsOperator}: per window its
 * start, its sums (core's {@link MeasureSums}, in the set's measure order), its last revision (0 = not fired yet) and
 * whether it holds sums not fired yet. A handful of windows per key (the open ones and those within allowed lateness),
 * in small parallel arrays: one state entry per key instead of Flink's window operator's entry per key and window,
 * plus two timers each.
 */
public final class KeyWindows {
    long[] starts = new long[2];
    MeasureSums[] sums = new MeasureSums[2];
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

    /** Adds a window holding {@code empty} sums, not fired, and returns its index. */
    int add(long start, MeasureSums empty) {
        if (size == starts.length) {
            int n = size * 2;
            starts = Arrays.copyOf(starts, n);
            sums = Arrays.copyOf(sums, n);
            revisions = Arrays.copyOf(revisions, n);
            pending = Arrays.copyOf(pending, n);
        }
        starts[size] = start;
        sums[size] = empty;
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
            if (j < 0 || k.revisions[j] != revisions[i] || k.pending[j] != pending[i] || !k.sums[j].equals(sums[i])) {
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
                    .append(sums[i]);
        }
        return b.append('}').toString();
    }

    /**
     * Per window: start, revision, pending, then its sums. Format {@value #FORMAT_SETS} writes the sums as the measure
     * count, the sums and the carries ({@link SetPartial#writeSums}); format {@value #FORMAT_DEFAULT_ONLY}, the release
     * before metric sets, wrote the default set's five measures (impressions, clicks, conversions, spend_micros,
     * events: its measure order) as longs and then spend's carry, and is still read.
     */
    public static final class Serializer extends TypeSerializerSingleton<KeyWindows> {
        private static final long serialVersionUID = 2L;
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
            c.sums = new MeasureSums[n];
            for (int i = 0; i < from.size; i++) c.sums[i] = from.sums[i].copy();
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
                SetPartial.writeSums(w.sums[i], out);
            }
        }

        @Override
        public KeyWindows deserialize(DataInputView in) throws IOException {
            KeyWindows w = new KeyWindows();
            int n = windows(in);
            for (int k = 0; k < n; k++) {
                long start = in.readLong();
                int revision = in.readInt();
                boolean pending = in.readBoolean();
                int i = w.add(start, SetPartial.readSums(in));
                w.revisions[i] = revision;
                w.pending[i] = pending;
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
            return new SerializerSnapshot(FORMAT_SETS);
        }
    }

    static final int FORMAT_DEFAULT_ONLY = 1;
    static final int FORMAT_SETS = 2;

    /** The previous release's layout of the default set's measures: four counts, spend (a sum) at this slot. */
    static final int DEFAULT_ONLY_MEASURES = 5;

    static final int DEFAULT_ONLY_SPEND = 3;

    private static int windows(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 1 << 20) throw new IOException("corrupt window state: " + n + " windows");
        return n;
    }

    /** Reads {@link #FORMAT_DEFAULT_ONLY} (the default set's windows of the release before metric sets); never writes. */
    static final class DefaultOnlyReader extends TypeSerializerSingleton<KeyWindows> {
        private static final long serialVersionUID = 1L;
        static final DefaultOnlyReader INSTANCE = new DefaultOnlyReader();

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
            return Serializer.INSTANCE.copy(from);
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
        public void serialize(KeyWindows w, DataOutputView out) {
            throw new UnsupportedOperationException("the previous release's window state is only read");
        }

        @Override
        public KeyWindows deserialize(DataInputView in) throws IOException {
            KeyWindows w = new KeyWindows();
            int n = windows(in);
            for (int k = 0; k < n; k++) {
                long start = in.readLong();
                int revision = in.readInt();
                boolean pending = in.readBoolean();
                long[] sums = new long[DEFAULT_ONLY_MEASURES];
                for (int m = 0; m < DEFAULT_ONLY_MEASURES; m++) sums[m] = in.readLong();
                long[] carries = new long[DEFAULT_ONLY_MEASURES];
                carries[DEFAULT_ONLY_SPEND] = in.readLong();
                int i = w.add(start, new MeasureSums(sums, carries));
                w.revisions[i] = revision;
                w.pending[i] = pending;
            }
            return w;
        }

        @Override
        public KeyWindows deserialize(KeyWindows reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) {
            throw new UnsupportedOperationException("the previous release's window state is only read");
        }

        @Override
        public TypeSerializerSnapshot<KeyWindows> snapshotConfiguration() {
            return new SerializerSnapshot(FORMAT_DEFAULT_ONLY);
        }
    }

    /**
     * The format as the snapshot's version. Versions up to 3 are the release before metric sets (this class was then a
     * {@code SimpleTypeSerializerSnapshot}, which writes nothing at version 3): {@link #FORMAT_DEFAULT_ONLY}. Version 4
     * is {@link #FORMAT_SETS}. Restoring the old one reads with {@link DefaultOnlyReader} and migrates: on the heap
     * backend the windows are objects by then, so the next checkpoint simply writes the new format.
     */
    public static final class SerializerSnapshot implements TypeSerializerSnapshot<KeyWindows> {
        private static final int LAST_SIMPLE_VERSION = 3;
        private static final int VERSION_SETS = 4;

        private int format;

        public SerializerSnapshot() {
            this(FORMAT_SETS);
        }

        SerializerSnapshot(int format) {
            this.format = format;
        }

        @Override
        public int getCurrentVersion() {
            return format == FORMAT_DEFAULT_ONLY ? LAST_SIMPLE_VERSION : VERSION_SETS;
        }

        @Override
        public void writeSnapshot(DataOutputView out) {
            // The version says everything.
        }

        @Override
        public void readSnapshot(int version, DataInputView in, ClassLoader classLoader) throws IOException {
            if (version < LAST_SIMPLE_VERSION) in.readUTF(); // SimpleTypeSerializerSnapshot's serializer class name
            if (version > VERSION_SETS) throw new IOException("unknown KeyWindows snapshot version " + version);
            format = version <= LAST_SIMPLE_VERSION ? FORMAT_DEFAULT_ONLY : FORMAT_SETS;
        }

        @Override
        public TypeSerializer<KeyWindows> restoreSerializer() {
            return format == FORMAT_DEFAULT_ONLY ? DefaultOnlyReader.INSTANCE : Serializer.INSTANCE;
        }

        @Override
        public TypeSerializerSchemaCompatibility<KeyWindows> resolveSchemaCompatibility(
                TypeSerializerSnapshot<KeyWindows> oldSnapshot) {
            if (!(oldSnapshot instanceof SerializerSnapshot old))
                return TypeSerializerSchemaCompatibility.incompatible();
            return old.format == format
                    ? TypeSerializerSchemaCompatibility.compatibleAsIs()
                    : TypeSerializerSchemaCompatibility.compatibleAfterMigration();
        }
    }
}
