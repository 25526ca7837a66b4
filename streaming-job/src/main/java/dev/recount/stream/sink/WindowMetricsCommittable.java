package dev.recount.stream.sink;

import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
import java.io.IOException;
import java.math.BigInteger;
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

    /**
     * Versioned, so committables in a retained checkpoint survive an upgrade of this class. Version 2 writes spend
     * as the bytes of its {@link BigInteger} (it may exceed a long); version 1 wrote every metric as a long and is
     * still read, so a job upgraded from a checkpoint with pending committables commits them.
     */
    public static final class Serializer implements SimpleVersionedSerializer<WindowMetricsCommittable> {
        static final int VERSION_LONG_SPEND = 1;
        static final int VERSION_EXACT_SPEND = 2;
        private static final Metric[] METRICS = Metric.values();

        @Override
        public int getVersion() {
            return VERSION_EXACT_SPEND;
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
                CommittableFields.writeString(out, w.key().campaignId());
                CommittableFields.writeString(out, w.key().channelId());
                for (Metric m : METRICS) {
                    if (m.isCount()) {
                        out.writeLong(w.metrics().count(m));
                    } else {
                        CommittableFields.writeSpend(out, w.metrics().get(m));
                    }
                }
                out.writeInt(row.revision());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public WindowMetricsCommittable deserialize(int version, byte[] bytes) throws IOException {
            if (version != VERSION_LONG_SPEND && version != VERSION_EXACT_SPEND) {
                throw new IOException("unknown WindowMetricsCommittable version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            ProgressMark progress = ProgressMark.read(in);
            int n = in.readInt();
            List<Row> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long start = in.readLong();
                long end = in.readLong();
                String campaign = CommittableFields.readString(in);
                String channel = CommittableFields.readString(in);
                BigInteger[] v = new BigInteger[METRICS.length];
                for (Metric m : METRICS) {
                    v[m.ordinal()] = m.isCount() || version == VERSION_LONG_SPEND
                            ? BigInteger.valueOf(in.readLong())
                            : CommittableFields.readSpend(in);
                }
                WindowMetrics metrics = new WindowMetrics(
                        v[Metric.IMPRESSIONS.ordinal()].longValueExact(),
                        v[Metric.CLICKS.ordinal()].longValueExact(),
                        v[Metric.CONVERSIONS.ordinal()].longValueExact(),
                        v[Metric.SPEND_MICROS.ordinal()],
                        v[Metric.EVENTS.ordinal()].longValueExact());
                rows.add(new Row(new WindowRow(new WindowKey(start, campaign, channel), end, metrics), in.readInt()));
            }
            return new WindowMetricsCommittable(rows, progress);
        }
    }
}
