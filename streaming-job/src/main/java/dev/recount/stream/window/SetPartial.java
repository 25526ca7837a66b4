package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.sets.MeasureSums;
import dev.recount.stream.types.AdEventSerializer;
import dev.recount.stream.types.CompactStrings;
import dev.recount.stream.types.SerializerTypeInfo;
import dev.recount.stream.types.VariableLengthSerializer;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Part of one window key's measures of one metric set, on its way from the de-dup operator to the window operator:
 * the sums ({@link MeasureSums}, in the set's measure order) of some of the window's unique events (see
 * {@link SetPartials}). The window operator adds partials up exactly as it would add events, so its firings,
 * revisions and lateness do not depend on how the events were grouped.
 *
 * <p>{@link #event} is set when the partial is one event sent on at once — an event for a window that has fired
 * already (within allowed lateness): it must re-fire the window on its own, and should the window operator find it
 * too late after all, the safety net can still route that very event to the backfill topic.
 *
 * <p>In flight only ({@link #TYPE}, a hand-written serializer); the de-dup operator's buffered sums are checkpointed
 * with the same serializer.
 */
public final class SetPartial {
    /** The set's name: what stays the same across runs (its position in the definitions file does not). */
    public final String set;

    public final long windowStart;
    /** The set's dimension values, in its order. */
    public final String[] dimensions;

    public final MeasureSums sums;
    /** The one event this partial holds when it was sent on at once; null for buffered sums. */
    public final AdEvent event;

    public SetPartial(String set, long windowStart, String[] dimensions, MeasureSums sums, AdEvent event) {
        this.set = Objects.requireNonNull(set, "set");
        this.windowStart = windowStart;
        this.dimensions = Objects.requireNonNull(dimensions, "dimensions");
        this.sums = Objects.requireNonNull(sums, "sums");
        this.event = event;
    }

    public static final TypeInformation<SetPartial> TYPE = new SerializerTypeInfo<>(SetPartial.class, new Serializer());

    @Override
    public boolean equals(Object o) {
        return o instanceof SetPartial p
                && windowStart == p.windowStart
                && set.equals(p.set)
                && Arrays.equals(dimensions, p.dimensions)
                && sums.equals(p.sums)
                && Objects.equals(event, p.event);
    }

    @Override
    public int hashCode() {
        return Objects.hash(set, windowStart, Arrays.hashCode(dimensions));
    }

    @Override
    public String toString() {
        return "SetPartial{" + set + ' ' + windowStart + ' ' + Arrays.toString(dimensions) + ' ' + sums
                + (event == null ? "" : " event " + event.eventId) + '}';
    }

    /**
     * Set, window start, dimension values, the sums (measure count, the sums, then the carries when there are any)
     * and the event when there is one.
     */
    public static final class Serializer extends VariableLengthSerializer<SetPartial> {
        private static final long serialVersionUID = 1L;

        @Override
        protected VariableLengthSerializer<SetPartial> newInstance() {
            return new Serializer(); // scratch buffers: one instance per thread
        }

        private transient AdEventSerializer events;

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public SetPartial copy(SetPartial from) {
            return new SetPartial(
                    from.set,
                    from.windowStart,
                    from.dimensions.clone(),
                    from.sums.copy(),
                    from.event == null ? null : from.event.copy());
        }

        @Override
        public void serialize(SetPartial p, DataOutputView out) throws IOException {
            CompactStrings s = strings();
            s.write(p.set, out);
            out.writeLong(p.windowStart);
            CompactStrings.writeVarInt(p.dimensions.length, out);
            for (String d : p.dimensions) s.write(d, out);
            writeSums(p.sums, out);
            out.writeBoolean(p.event != null);
            if (p.event != null) events().serialize(p.event, out);
        }

        @Override
        public SetPartial deserialize(DataInputView in) throws IOException {
            CompactStrings s = strings();
            String set = s.read(in);
            long windowStart = in.readLong();
            int n = CompactStrings.readVarInt(in);
            if (n < 1 || n > 1024) throw new IOException("corrupt partial: " + n + " dimensions");
            String[] dims = new String[n];
            for (int i = 0; i < n; i++) dims[i] = s.read(in);
            MeasureSums sums = readSums(in);
            AdEvent event = in.readBoolean() ? events().deserialize(in) : null;
            return new SetPartial(set, windowStart, dims, sums, event);
        }

        private AdEventSerializer events() {
            if (events == null) events = new AdEventSerializer();
            return events;
        }

        @Override
        public TypeSerializerSnapshot<SetPartial> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    /** Format 1; a new format needs a versioned snapshot (see KeyWindows.SerializerSnapshot). */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<SetPartial> {
        public SerializerSnapshot() {
            super(Serializer::new);
        }
    }

    /** Measure count, the sums, a flag, and the carries when the flag says so. */
    static void writeSums(MeasureSums sums, DataOutputView out) throws IOException {
        CompactStrings.writeVarInt(sums.sums.length, out);
        for (long v : sums.sums) out.writeLong(v);
        out.writeBoolean(sums.carries != null);
        if (sums.carries != null) for (long c : sums.carries) out.writeLong(c);
    }

    static MeasureSums readSums(DataInputView in) throws IOException {
        int n = CompactStrings.readVarInt(in);
        if (n < 1 || n > 4096) throw new IOException("corrupt sums: " + n + " measures");
        long[] sums = new long[n];
        for (int i = 0; i < n; i++) sums[i] = in.readLong();
        long[] carries = null;
        if (in.readBoolean()) {
            carries = new long[n];
            for (int i = 0; i < n; i++) carries[i] = in.readLong();
        }
        return new MeasureSums(sums, carries);
    }
}
