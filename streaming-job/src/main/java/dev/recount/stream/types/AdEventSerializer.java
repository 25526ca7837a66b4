package dev.recount.stream.types;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Core's {@link AdEvent} as the job's channels carry it: every field in declaration order, read and written
 * directly (Flink's POJO serializer reaches each field by reflection, with a null flag per field and a subclass
 * tag per record; it was a tenth of the busiest source thread). Strings through {@link CompactStrings}: exact for
 * any content, one byte per ASCII character.
 *
 * <p>Formats: {@value #FORMAT_CONTRACT} wrote the contract's fields and the Kafka coordinates; {@value #FORMAT_ATTRIBUTES}
 * (metric sets) adds the event's fields beyond the contract: the raw JSON of all of them, then the declared string
 * and integer attributes' values (each array a variable-length {@code length + 1}, 0 = null). The snapshot names the
 * format, so a snapshot of format 1 restores a serializer that reads format 1 (events from it have no attributes).
 *
 * <p>Used for records in flight only; state that holds events (the attribution join's unattributed events) keeps the
 * POJO serializer it was checkpointed with. Should this serializer ever serve state, its snapshot pins the format:
 * the event type is written as its ordinal + 1 (0 = null), so reordering {@link EventType} needs a new format that
 * maps old ordinals.
 */
public final class AdEventSerializer extends TypeSerializer<AdEvent> {
    private static final long serialVersionUID = 2L;
    private static final EventType[] TYPES = EventType.values();

    /** The contract's fields and the Kafka coordinates (the release before metric sets). */
    static final int FORMAT_CONTRACT = 1;
    /** {@link #FORMAT_CONTRACT} and the fields beyond the contract. */
    static final int FORMAT_ATTRIBUTES = 2;

    private final int format;
    private transient CompactStrings strings;

    public AdEventSerializer() {
        this(FORMAT_ATTRIBUTES);
    }

    AdEventSerializer(int format) {
        if (format != FORMAT_CONTRACT && format != FORMAT_ATTRIBUTES) {
            throw new IllegalArgumentException("unknown AdEvent format " + format);
        }
        this.format = format;
    }

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public TypeSerializer<AdEvent> duplicate() {
        // Not stateless: the string codec has a scratch buffer, so every thread gets its own instance.
        return new AdEventSerializer(format);
    }

    @Override
    public AdEvent createInstance() {
        return new AdEvent();
    }

    @Override
    public AdEvent copy(AdEvent from) {
        return from == null ? null : from.copy();
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
        if (format == FORMAT_CONTRACT) return;
        s.write(e.attributesJson, out);
        String[] texts = e.stringAttributes;
        CompactStrings.writeVarInt(texts == null ? 0 : texts.length + 1, out);
        if (texts != null) for (String t : texts) s.write(t, out);
        long[] numbers = e.integerAttributes;
        CompactStrings.writeVarInt(numbers == null ? 0 : numbers.length + 1, out);
        if (numbers != null) for (long n : numbers) out.writeLong(n);
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
        if (format == FORMAT_CONTRACT) return e;
        e.attributesJson = s.read(in);
        int texts = arrayLength(in);
        if (texts >= 0) {
            e.stringAttributes = new String[texts];
            for (int i = 0; i < texts; i++) e.stringAttributes[i] = s.read(in);
        }
        int numbers = arrayLength(in);
        if (numbers >= 0) {
            e.integerAttributes = new long[numbers];
            for (int i = 0; i < numbers; i++) e.integerAttributes[i] = in.readLong();
        }
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
        if (format == FORMAT_CONTRACT) return;
        s.copy(in, out);
        int texts = arrayLength(in);
        CompactStrings.writeVarInt(texts + 1, out);
        for (int i = 0; i < texts; i++) s.copy(in, out);
        int numbers = arrayLength(in);
        CompactStrings.writeVarInt(numbers + 1, out);
        for (int i = 0; i < numbers; i++) out.writeLong(in.readLong());
    }

    /** An array's length from its header; -1 for null. */
    private static int arrayLength(DataInputView in) throws IOException {
        int header = CompactStrings.readVarInt(in);
        if (header < 0 || header > CompactStrings.MAX_LENGTH) {
            throw new IOException("corrupt event: an attribute array of " + header + " entries");
        }
        return header - 1;
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
        return o instanceof AdEventSerializer other && other.format == format;
    }

    @Override
    public int hashCode() {
        return 31 * AdEventSerializer.class.hashCode() + format;
    }

    @Override
    public TypeSerializerSnapshot<AdEvent> snapshotConfiguration() {
        return new Snapshot(format);
    }

    /**
     * The format, as the snapshot's version: versions up to 3 are the snapshots of format 1 (Flink's
     * {@code SimpleTypeSerializerSnapshot}, which this class was, wrote nothing at version 3 and the serializer's class
     * name before); version 4 is format 2. The class name stays, so snapshots of either restore to this class.
     */
    public static final class Snapshot implements TypeSerializerSnapshot<AdEvent> {
        private static final int LAST_SIMPLE_VERSION = 3;
        private static final int VERSION_ATTRIBUTES = 4;

        private int format;

        public Snapshot() {
            this(FORMAT_ATTRIBUTES);
        }

        Snapshot(int format) {
            this.format = format;
        }

        @Override
        public int getCurrentVersion() {
            return format == FORMAT_CONTRACT ? LAST_SIMPLE_VERSION : VERSION_ATTRIBUTES;
        }

        @Override
        public void writeSnapshot(DataOutputView out) {
            // The version says everything.
        }

        @Override
        public void readSnapshot(int version, DataInputView in, ClassLoader classLoader) throws IOException {
            if (version < LAST_SIMPLE_VERSION)
                in.readUTF(); // the serializer class name, as SimpleTypeSerializerSnapshot wrote it
            if (version > VERSION_ATTRIBUTES)
                throw new IOException("unknown AdEventSerializer snapshot version " + version);
            format = version <= LAST_SIMPLE_VERSION ? FORMAT_CONTRACT : FORMAT_ATTRIBUTES;
        }

        @Override
        public TypeSerializer<AdEvent> restoreSerializer() {
            return new AdEventSerializer(format);
        }

        @Override
        public TypeSerializerSchemaCompatibility<AdEvent> resolveSchemaCompatibility(
                TypeSerializerSnapshot<AdEvent> oldSnapshot) {
            if (!(oldSnapshot instanceof Snapshot old)) return TypeSerializerSchemaCompatibility.incompatible();
            return old.format == format
                    ? TypeSerializerSchemaCompatibility.compatibleAsIs()
                    : TypeSerializerSchemaCompatibility.compatibleAfterMigration();
        }
    }
}
