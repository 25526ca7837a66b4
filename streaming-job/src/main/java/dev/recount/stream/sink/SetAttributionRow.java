package dev.recount.stream.sink;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import dev.recount.stream.types.SerializerTypeInfo;
import java.io.IOException;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** An attribution row of the metric set {@code set}, for that set's stream attribution table. */
public record SetAttributionRow(String set, Row row) {
    public SetAttributionRow {
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(row, "row");
    }

    /** In flight (attribution windows → sink writer); never in state. */
    public static final TypeInformation<SetAttributionRow> TYPE =
            new SerializerTypeInfo<>(SetAttributionRow.class, Serializer.INSTANCE);

    static void write(DataOutputView out, AttributionRow a) throws IOException {
        CommittableFields.writeWindowAndKey(out, a.key(), a.windowEndMillis());
        out.writeLong(a.metrics().attributedClicks());
        out.writeLong(a.metrics().attributedConversions());
        out.writeLong(a.metrics().unattributedClicks());
        CommittableFields.writeBig(out, a.metrics().attributedSpendMicros());
    }

    static AttributionRow read(DataInputView in) throws IOException {
        long start = in.readLong();
        long end = in.readLong();
        var key = CommittableFields.readDimensions(in, start);
        return new AttributionRow(
                key,
                end,
                new AttributionMetrics(in.readLong(), in.readLong(), in.readLong(), CommittableFields.readBig(in)));
    }

    /** The set's name, the row's window, dimension values and metrics, and its revision. */
    public static final class Serializer extends TypeSerializerSingleton<SetAttributionRow> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public SetAttributionRow createInstance() {
            return null;
        }

        @Override
        public SetAttributionRow copy(SetAttributionRow from) {
            return from;
        }

        @Override
        public SetAttributionRow copy(SetAttributionRow from, SetAttributionRow reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(SetAttributionRow r, DataOutputView out) throws IOException {
            CommittableFields.writeString(out, r.set());
            write(out, r.row().attribution());
            out.writeInt(r.row().revision());
        }

        @Override
        public SetAttributionRow deserialize(DataInputView in) throws IOException {
            String set = CommittableFields.readString(in);
            return new SetAttributionRow(set, new Row(read(in), in.readInt()));
        }

        @Override
        public SetAttributionRow deserialize(SetAttributionRow reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            serialize(deserialize(source), target);
        }

        @Override
        public TypeSerializerSnapshot<SetAttributionRow> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<SetAttributionRow> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
