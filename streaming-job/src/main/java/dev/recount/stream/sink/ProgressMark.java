package dev.recount.stream.sink;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** The watermark the window-metrics writer had when checkpoint {@code checkpointId} was taken. */
public record ProgressMark(long checkpointId, long watermark) {

    public static ProgressMark later(ProgressMark a, ProgressMark b) {
        if (a == null) return b;
        if (b == null) return a;
        return a.checkpointId >= b.checkpointId ? a : b;
    }

    static void write(DataOutputSerializer out, ProgressMark mark) throws IOException {
        out.writeBoolean(mark != null);
        if (mark != null) {
            out.writeLong(mark.checkpointId);
            out.writeLong(mark.watermark);
        }
    }

    static ProgressMark read(DataInputDeserializer in) throws IOException {
        return in.readBoolean() ? new ProgressMark(in.readLong(), in.readLong()) : null;
    }

    /** Writer state: one mark per writer subtask. */
    public static final class Serializer implements SimpleVersionedSerializer<ProgressMark> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(ProgressMark mark) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(24);
            write(out, mark);
            return out.getCopyOfBuffer();
        }

        @Override
        public ProgressMark deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) throw new IOException("unknown ProgressMark version " + version);
            return read(new DataInputDeserializer(bytes));
        }
    }
}
