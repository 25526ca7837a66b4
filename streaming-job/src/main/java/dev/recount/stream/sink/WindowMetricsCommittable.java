package dev.recount.stream.sink;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
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
 * What one writer subtask hands to its committer at one checkpoint: the latest row per (set, window key) it received
 * since the previous checkpoint, and the progress mark of the previous checkpoint (see {@link WindowMetricsWriter}).
 */
public record WindowMetricsCommittable(List<SetWindowRow> rows, ProgressMark progress) {
    public WindowMetricsCommittable {
        rows = List.copyOf(rows);
    }

    /**
     * Versioned, so committables in a retained checkpoint survive an upgrade of this class. Version 3 (metric sets)
     * writes each row with its set's name, its dimension values and its measure values, each with its count, every
     * value an exact integer. The release before metric sets wrote the default set's rows only — (campaign, channel)
     * and its five measures in their order — version 2 with spend as the bytes of its {@link BigInteger}, version 1
     * with every measure a long; both are still read, as default-set rows, so a job upgraded from a checkpoint with
     * pending committables commits them.
     */
    public static final class Serializer implements SimpleVersionedSerializer<WindowMetricsCommittable> {
        static final int VERSION_LONG_SPEND = 1;
        static final int VERSION_EXACT_SPEND = 2;
        static final int VERSION_SETS = 3;
        /** Where spend_micros, the one sum, was among the default set's five measures in versions 1 and 2. */
        private static final int DEFAULT_ONLY_MEASURES = 5;

        private static final int DEFAULT_ONLY_SPEND = 3;

        @Override
        public int getVersion() {
            return VERSION_SETS;
        }

        @Override
        public byte[] serialize(WindowMetricsCommittable c) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64 + c.rows().size() * 96);
            ProgressMark.write(out, c.progress());
            out.writeInt(c.rows().size());
            for (SetWindowRow r : c.rows()) {
                CommittableFields.writeString(out, r.set());
                CommittableFields.writeWindowRow(out, r.row().window());
                out.writeInt(r.row().revision());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public WindowMetricsCommittable deserialize(int version, byte[] bytes) throws IOException {
            if (version != VERSION_LONG_SPEND && version != VERSION_EXACT_SPEND && version != VERSION_SETS) {
                throw new IOException("unknown WindowMetricsCommittable version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            ProgressMark progress = ProgressMark.read(in);
            int n = in.readInt();
            List<SetWindowRow> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                if (version == VERSION_SETS) {
                    String set = CommittableFields.readString(in);
                    rows.add(new SetWindowRow(set, new Row(CommittableFields.readWindowRow(in), in.readInt())));
                } else {
                    rows.add(new SetWindowRow(MetricSet.DEFAULT, readDefaultOnly(in, version)));
                }
            }
            return new WindowMetricsCommittable(rows, progress);
        }

        private static Row readDefaultOnly(DataInputDeserializer in, int version) throws IOException {
            long start = in.readLong();
            long end = in.readLong();
            String campaign = CommittableFields.readString(in);
            String channel = CommittableFields.readString(in);
            BigInteger[] v = new BigInteger[DEFAULT_ONLY_MEASURES];
            for (int m = 0; m < DEFAULT_ONLY_MEASURES; m++) {
                v[m] = m == DEFAULT_ONLY_SPEND && version == VERSION_EXACT_SPEND
                        ? CommittableFields.readBig(in)
                        : BigInteger.valueOf(in.readLong());
            }
            return new Row(
                    new WindowRow(WindowKey.of(start, campaign, channel), end, new MeasureValues(v)), in.readInt());
        }
    }
}
