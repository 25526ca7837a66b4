package dev.recount.stream.attribution;

import dev.recount.core.event.AdEvent;
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
 * An event for attribution with the names of the metric sets (with attribution on) it counts in: those it is not too
 * late for and that counted its window (the de-dup operator decides). The join sends a click's or conversion's
 * decisions to exactly these sets, and holds an unattributed one with them.
 */
public final class EventInSets {
    public final AdEvent event;
    /** Set names; an impression counts as evidence for every set and carries the sets it was on time for. */
    public final String[] sets;

    public EventInSets(AdEvent event, String[] sets) {
        this.event = Objects.requireNonNull(event, "event");
        this.sets = Objects.requireNonNull(sets, "sets");
    }

    /** In flight (de-dup → join) and in the join's state (held clicks and conversions). */
    public static final TypeInformation<EventInSets> TYPE =
            new SerializerTypeInfo<>(EventInSets.class, new Serializer());

    @Override
    public boolean equals(Object o) {
        return o instanceof EventInSets e && e.event.equals(event) && Arrays.equals(e.sets, sets);
    }

    @Override
    public int hashCode() {
        return event.hashCode();
    }

    @Override
    public String toString() {
        return event.eventId + " in " + Arrays.toString(sets);
    }

    /** The set names (count, then each), then the event (AdEventSerializer's format 2). */
    public static final class Serializer extends VariableLengthSerializer<EventInSets> {
        private static final long serialVersionUID = 1L;

        @Override
        protected VariableLengthSerializer<EventInSets> newInstance() {
            return new Serializer(); // scratch buffers: one instance per thread
        }

        private final AdEventSerializer events = new AdEventSerializer();

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public EventInSets copy(EventInSets from) {
            return new EventInSets(from.event.copy(), from.sets.clone());
        }

        @Override
        public void serialize(EventInSets e, DataOutputView out) throws IOException {
            CompactStrings.writeVarInt(e.sets.length, out);
            for (String s : e.sets) strings().write(s, out);
            events.serialize(e.event, out);
        }

        @Override
        public EventInSets deserialize(DataInputView in) throws IOException {
            int n = CompactStrings.readVarInt(in);
            if (n < 0 || n > 4096) throw new IOException("corrupt event: in " + n + " sets");
            String[] sets = new String[n];
            for (int i = 0; i < n; i++) sets[i] = strings().read(in);
            return new EventInSets(events.deserialize(in), sets);
        }

        @Override
        public TypeSerializerSnapshot<EventInSets> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    /** Format 1 (events in AdEventSerializer's format 2); a new format needs a versioned snapshot. */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<EventInSets> {
        public SerializerSnapshot() {
            super(Serializer::new);
        }
    }
}
