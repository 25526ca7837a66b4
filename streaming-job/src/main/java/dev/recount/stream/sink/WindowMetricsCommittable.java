package dev.recount.stream.sink;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * What one writer subtask hands to its committer at one checkpoint: the latest row per window key it received
 * since the previous checkpoint, and the progress mark of the previous checkpoint (see {@link WindowMetricsWriter}).
 */
public record WindowMetricsCommittable(List<Row> rows, ProgressMark progress) {
    public WindowMetricsCommittable {
        rows = List.copyOf(rows);
    }

    /** Versioned, so committables in a retained checkpoint survive an upgrade of this class. */
    public static final class Serializer implements SimpleVersionedSerializer<WindowMetricsCommittable> {
        private static final Metric[] METRICS = Metric.values();

        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(WindowMetricsCommittable c) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64 + c.rows().size() * 96);
            ProgressMark.write(out, c.progress());
            out.writeInt(c.rows().size());
            for (Row row : c.rows()) {
                WindowRow w = row.window();
                out.writeLong(w.key().windowStartMillis());
                out.writeLong(w.windowEndMillis());
                // Not writeUTF: its 64 KB limit would turn a long (valid) id into a job failure.
                writeString(out, w.key().campaignId());
                writeString(out, w.key().channelId());
                for (Metric m : METRICS) out.writeLong(w.metrics().get(m));
                out.writeInt(row.revision());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public WindowMetricsCommittable deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) throw new IOException("unknown WindowMetricsCommittable version " + version);
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            ProgressMark progress = ProgressMark.read(in);
            int n = in.readInt();
            List<Row> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long start = in.readLong();
                long end = in.readLong();
                String campaign = readString(in);
                String channel = readString(in);
                long[] v = new long[METRICS.length];
                for (int m = 0; m < v.length; m++) v[m] = in.readLong();
                WindowMetrics metrics = new WindowMetrics(v[Metric.IMPRESSIONS.ordinal()], v[Metric.CLICKS.ordinal()],
                        v[Metric.CONVERSIONS.ordinal()], v[Metric.SPEND_MICROS.ordinal()], v[Metric.EVENTS.ordinal()]);
                rows.add(new Row(new WindowRow(new WindowKey(start, campaign, channel), end, metrics), in.readInt()));
            }
            return new WindowMetricsCommittable(rows, progress);
        }

        private static void writeString(DataOutputSerializer out, String s) throws IOException {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            out.writeInt(bytes.length);
            out.write(bytes);
        }

        private static String readString(DataInputDeserializer in) throws IOException {
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
