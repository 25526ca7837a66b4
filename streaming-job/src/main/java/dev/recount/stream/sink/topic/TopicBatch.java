package dev.recount.stream.sink.topic;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The committable of {@link CheckpointedTopicSink}: every record its writer received between two checkpoints, and
 * the batch's place in the publication order ({@code lineage}, {@code sequence}). The records themselves travel in
 * the checkpoint, so a batch can be published after any failure or delay, however long.
 *
 * @param lineage  identifies a chain of runs whose sequence numbers continue each other (see StreamRun); a fresh
 *                 start begins a new lineage, because its sequence numbers start again at 1
 * @param sequence 1, 2, ... per lineage, in checkpoint order
 */
public record TopicBatch(String lineage, long sequence, List<TopicRecord> records) {
    public TopicBatch {
        Objects.requireNonNull(lineage, "lineage");
        if (sequence < 1) throw new IllegalArgumentException("sequence must be >= 1, got " + sequence);
        records = List.copyOf(records);
    }

    @Override
    public String toString() {
        return "TopicBatch{" + lineage + " #" + sequence + ", " + records.size() + " records}";
    }

    /** Versioned: batches in retained checkpoints must stay readable after an upgrade of this class. */
    public static final class Serializer implements SimpleVersionedSerializer<TopicBatch> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(TopicBatch batch) throws IOException {
            int size = 64;
            for (TopicRecord r : batch.records()) size += 8 + r.value().length + (r.key() == null ? 0 : r.key().length);
            DataOutputSerializer out = new DataOutputSerializer(size);
            writeBytes(out, batch.lineage().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            out.writeLong(batch.sequence());
            out.writeInt(batch.records().size());
            for (TopicRecord r : batch.records()) {
                writeBytes(out, r.key());
                writeBytes(out, r.value());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public TopicBatch deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) throw new IOException("unknown TopicBatch version " + version);
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            String lineage = new String(readBytes(in), java.nio.charset.StandardCharsets.UTF_8);
            long sequence = in.readLong();
            int n = in.readInt();
            List<TopicRecord> records = new ArrayList<>(n);
            for (int i = 0; i < n; i++) records.add(new TopicRecord(readBytes(in), readBytes(in)));
            return new TopicBatch(lineage, sequence, records);
        }

        /** Length-prefixed; -1 for null (a record key may be null). */
        private static void writeBytes(DataOutputSerializer out, byte[] bytes) throws IOException {
            if (bytes == null) {
                out.writeInt(-1);
                return;
            }
            out.writeInt(bytes.length);
            out.write(bytes);
        }

        private static byte[] readBytes(DataInputDeserializer in) throws IOException {
            int n = in.readInt();
            if (n < 0) return null;
            byte[] bytes = new byte[n];
            in.readFully(bytes);
            return bytes;
        }
    }
}
