package dev.recount.stream.lake;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * One writer subtask's counts of one checkpoint: rows handed to the lake writer per hour (keyed by the hour's start
 * in epoch milliseconds), under an id that makes a repeated commit of them a no-op.
 */
public record LakeLedgerCommittable(UUID commitId, SortedMap<Long, Long> rowsByHour) {
    public LakeLedgerCommittable {
        Objects.requireNonNull(commitId, "commitId");
        rowsByHour = new TreeMap<>(rowsByHour);
    }

    /** Versioned, so committables in a retained checkpoint survive a later change of this class. */
    public static final class Serializer implements SimpleVersionedSerializer<LakeLedgerCommittable> {
        static final int VERSION = 1;

        @Override
        public int getVersion() {
            return VERSION;
        }

        @Override
        public byte[] serialize(LakeLedgerCommittable c) throws IOException {
            DataOutputSerializer out =
                    new DataOutputSerializer(24 + c.rowsByHour().size() * 16);
            out.writeLong(c.commitId().getMostSignificantBits());
            out.writeLong(c.commitId().getLeastSignificantBits());
            out.writeInt(c.rowsByHour().size());
            for (Map.Entry<Long, Long> e : c.rowsByHour().entrySet()) {
                out.writeLong(e.getKey());
                out.writeLong(e.getValue());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public LakeLedgerCommittable deserialize(int version, byte[] bytes) throws IOException {
            if (version != VERSION) throw new IOException("unknown LakeLedgerCommittable version " + version);
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            UUID id = new UUID(in.readLong(), in.readLong());
            int n = in.readInt();
            TreeMap<Long, Long> rows = new TreeMap<>();
            for (int i = 0; i < n; i++) rows.put(in.readLong(), in.readLong());
            return new LakeLedgerCommittable(id, rows);
        }
    }
}
