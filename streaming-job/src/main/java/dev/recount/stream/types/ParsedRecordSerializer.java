package dev.recount.stream.types;

import dev.recount.core.event.InvalidReason;
import dev.recount.stream.source.DeadLetter;
import dev.recount.stream.source.ParsedRecord;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The source's output, a valid event or a dead letter. It is never written out in the job (the source is chained
 * to the validation step), but without object reuse Flink copies every record between chained operators with this
 * serializer's {@link #copy(ParsedRecord)}: the POJO serializer did so field by field through reflection, on the
 * busiest thread. A copy here is a new record around a copy of the event (dead letters are never changed, so they
 * are shared).
 *
 * <p>Format: a tag byte (1 = valid event, 2 = dead letter), then the event ({@link AdEventSerializer}) or the dead
 * letter's reason ordinal + 1, JSON and key (length + 1, 0 = null).
 */
public final class ParsedRecordSerializer extends TypeSerializer<ParsedRecord> {
    private static final long serialVersionUID = 1L;
    private static final InvalidReason[] REASONS = InvalidReason.values();
    private static final int VALID = 1;
    private static final int INVALID = 2;

    private final AdEventSerializer events = new AdEventSerializer();
    private transient CompactStrings strings;

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public TypeSerializer<ParsedRecord> duplicate() {
        return new ParsedRecordSerializer();
    }

    @Override
    public ParsedRecord createInstance() {
        return new ParsedRecord();
    }

    @Override
    public ParsedRecord copy(ParsedRecord from) {
        ParsedRecord c = new ParsedRecord();
        c.event = events.copy(from.event);
        c.deadLetter = from.deadLetter;
        return c;
    }

    @Override
    public ParsedRecord copy(ParsedRecord from, ParsedRecord reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(ParsedRecord r, DataOutputView out) throws IOException {
        if (r.event != null) {
            out.writeByte(VALID);
            events.serialize(r.event, out);
            return;
        }
        DeadLetter d = r.deadLetter;
        if (d == null) throw new IOException("a parsed record holds neither an event nor a dead letter");
        out.writeByte(INVALID);
        out.writeByte(d.reason == null ? 0 : d.reason.ordinal() + 1);
        strings().write(d.json, out);
        if (d.key == null) {
            CompactStrings.writeVarInt(0, out);
        } else {
            CompactStrings.writeVarInt(d.key.length + 1, out);
            out.write(d.key);
        }
    }

    @Override
    public ParsedRecord deserialize(DataInputView in) throws IOException {
        int tag = in.readUnsignedByte();
        if (tag == VALID) return ParsedRecord.valid(events.deserialize(in));
        if (tag != INVALID) throw new IOException("corrupt parsed record: tag " + tag);
        DeadLetter d = new DeadLetter();
        int reason = in.readUnsignedByte();
        if (reason > REASONS.length) throw new IOException("corrupt dead letter: reason code " + reason);
        d.reason = reason == 0 ? null : REASONS[reason - 1];
        d.json = strings().read(in);
        int keyLength = CompactStrings.readVarInt(in);
        if (keyLength > 0) {
            d.key = new byte[keyLength - 1];
            in.readFully(d.key);
        }
        ParsedRecord r = new ParsedRecord();
        r.deadLetter = d;
        return r;
    }

    @Override
    public ParsedRecord deserialize(ParsedRecord reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public void copy(DataInputView in, DataOutputView out) throws IOException {
        serialize(deserialize(in), out);
    }

    private CompactStrings strings() {
        CompactStrings s = strings;
        if (s == null) strings = s = new CompactStrings();
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ParsedRecordSerializer;
    }

    @Override
    public int hashCode() {
        return ParsedRecordSerializer.class.hashCode();
    }

    @Override
    public TypeSerializerSnapshot<ParsedRecord> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Format version 1 (see the class comment). */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<ParsedRecord> {
        public Snapshot() {
            super(ParsedRecordSerializer::new);
        }
    }
}
