package dev.recount.stream.types;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Core's {@link AdEvent} as the job's channels carry it: every field in declaration order, read and written
 * directly (Flink's POJO serializer reaches each field by reflection, with a null flag per field and a subclass
 * tag per record; it was a tenth of the busiest source thread). Strings through {@link CompactStrings}: exact for
 * any content, one byte per ASCII character.
 *
 * <p>Used for records in flight only; state that holds events (the attribution join's unattributed events, the
 * de-dup's buffered partials) keeps the POJO serializer it was checkpointed with. Should this serializer ever
 * serve state, its snapshot pins the format: the event type is written as its ordinal + 1 (0 = null), so
 * reordering {@link EventType} needs a new snapshot version that maps old ordinals.
 */
public final class AdEventSerializer extends TypeSerializer<AdEvent> {
    private static final long serialVersionUID = 1L;
    private static final EventType[] TYPES = EventType.values();

    private transient CompactStrings strings;

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public TypeSerializer<AdEvent> duplicate() {
        // Not stateless: the string codec has a scratch buffer, so every thread gets its own instance.
        return new AdEventSerializer();
    }

    @Override
    public AdEvent createInstance() {
        return new AdEvent();
    }

    @Override
    public AdEvent copy(AdEvent from) {
        return from == null
                ? null
                : new AdEvent(
                        from.eventId,
                        from.eventType,
                        from.eventTs,
                        from.campaignId,
                        from.channelId,
                        from.costMicros,
                        from.requestId,
                        from.topic,
                        from.partition,
                        from.offset,
                        from.recordTs);
    }

    @Override
    public AdEvent copy(AdEvent from, AdEvent reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(AdEvent e, DataOutputView out) throws IOException {
        CompactStrings s = strings();
        s.write(e.eventId, out);
        out.writeByte(e.eventType == null ? 0 : e.eventType.ordinal() + 1);
        out.writeLong(e.eventTs);
        s.write(e.campaignId, out);
        s.write(e.channelId, out);
        out.writeLong(e.costMicros);
        s.write(e.requestId, out);
        s.write(e.topic, out);
        out.writeInt(e.partition);
        out.writeLong(e.offset);
        out.writeLong(e.recordTs);
    }

    @Override
    public AdEvent deserialize(DataInputView in) throws IOException {
        CompactStrings s = strings();
        AdEvent e = new AdEvent();
        e.eventId = s.read(in);
        e.eventType = eventType(in.readUnsignedByte());
        e.eventTs = in.readLong();
        e.campaignId = s.read(in);
        e.channelId = s.read(in);
        e.costMicros = in.readLong();
        e.requestId = s.read(in);
        e.topic = s.read(in);
        e.partition = in.readInt();
        e.offset = in.readLong();
        e.recordTs = in.readLong();
        return e;
    }

    @Override
    public AdEvent deserialize(AdEvent reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public void copy(DataInputView in, DataOutputView out) throws IOException {
        CompactStrings s = strings();
        s.copy(in, out);
        out.writeByte(in.readUnsignedByte());
        out.writeLong(in.readLong());
        s.copy(in, out);
        s.copy(in, out);
        out.writeLong(in.readLong());
        s.copy(in, out);
        s.copy(in, out);
        out.writeInt(in.readInt());
        out.writeLong(in.readLong());
        out.writeLong(in.readLong());
    }

    private static EventType eventType(int code) throws IOException {
        if (code == 0) return null;
        if (code > TYPES.length) throw new IOException("corrupt event: event type code " + code);
        return TYPES[code - 1];
    }

    /** Lazily: Java serialization (how Flink ships serializers to tasks) leaves the transient codec null. */
    private CompactStrings strings() {
        CompactStrings s = strings;
        if (s == null) strings = s = new CompactStrings();
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdEventSerializer;
    }

    @Override
    public int hashCode() {
        return AdEventSerializer.class.hashCode();
    }

    @Override
    public TypeSerializerSnapshot<AdEvent> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Format version 1 (see the class comment); restores to a new {@link AdEventSerializer}. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<AdEvent> {
        public Snapshot() {
            super(AdEventSerializer::new);
        }
    }
}
