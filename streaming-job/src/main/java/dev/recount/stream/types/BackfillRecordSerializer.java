package dev.recount.stream.types;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Core's {@link BackfillRecord} in flight (de-dup and the window operator's safety net → the backfill topic's
 * publisher): the event ({@link AdEventSerializer}), the sets it was too late for with their windows, the watermark and
 * the Kafka coordinates. Hand-written because the record's list of sets has no Flink type of its own (it would fall to
 * Kryo, which the job switches off).
 */
public final class BackfillRecordSerializer extends VariableLengthSerializer<BackfillRecord> {
    private static final long serialVersionUID = 1L;

    public static final TypeInformation<BackfillRecord> TYPE =
            new SerializerTypeInfo<>(BackfillRecord.class, new BackfillRecordSerializer());

    private final AdEventSerializer events = new AdEventSerializer();

    @Override
    protected VariableLengthSerializer<BackfillRecord> newInstance() {
        return new BackfillRecordSerializer();
    }

    @Override
    public boolean isImmutableType() {
        return true; // a record of an event nobody changes after it is routed
    }

    @Override
    public BackfillRecord copy(BackfillRecord from) {
        return from;
    }

    @Override
    public void serialize(BackfillRecord r, DataOutputView out) throws IOException {
        events.serialize(r.event(), out);
        CompactStrings.writeVarInt(r.sets().size(), out);
        for (SetWindow w : r.sets()) {
            strings().write(w.set(), out);
            out.writeLong(w.windowStart());
            out.writeLong(w.windowEnd());
        }
        out.writeLong(r.watermark());
        strings().write(r.topic(), out);
        out.writeInt(r.partition());
        out.writeLong(r.offset());
    }

    @Override
    public BackfillRecord deserialize(DataInputView in) throws IOException {
        AdEvent event = events.deserialize(in);
        int n = CompactStrings.readVarInt(in);
        if (n < 1 || n > 4096) throw new IOException("corrupt backfill record: " + n + " sets");
        List<SetWindow> sets = new ArrayList<>(n);
        for (int i = 0; i < n; i++) sets.add(new SetWindow(strings().read(in), in.readLong(), in.readLong()));
        return new BackfillRecord(event, sets, in.readLong(), strings().read(in), in.readInt(), in.readLong());
    }

    @Override
    public TypeSerializerSnapshot<BackfillRecord> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Format 1; in flight only. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<BackfillRecord> {
        public Snapshot() {
            super(BackfillRecordSerializer::new);
        }
    }
}
