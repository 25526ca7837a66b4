package dev.recount.stream.sink;

import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.stream.types.SerializerTypeInfo;
import java.io.IOException;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** A window row of the metric set {@code set}: what the window operator fires, for that set's stream table. */
public record SetWindowRow(String set, Row row) {
    public SetWindowRow {
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(row, "row");
    }

    /** In flight (window operator → sink writer); never in state. */
    public static final TypeInformation<SetWindowRow> TYPE =
            new SerializerTypeInfo<>(SetWindowRow.class, Serializer.INSTANCE);

    /** The set's name, the row's window, dimension and measure values, and its revision. */
    public static final class Serializer extends TypeSerializerSingleton<SetWindowRow> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public SetWindowRow createInstance() {
            return null;
        }

        @Override
        public SetWindowRow copy(SetWindowRow from) {
            return from;
        }

        @Override
        public SetWindowRow copy(SetWindowRow from, SetWindowRow reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(SetWindowRow r, DataOutputView out) throws IOException {
            CommittableFields.writeString(out, r.set());
            CommittableFields.writeWindowRow(out, r.row().window());
            out.writeInt(r.row().revision());
        }

        @Override
        public SetWindowRow deserialize(DataInputView in) throws IOException {
            String set = CommittableFields.readString(in);
            return new SetWindowRow(set, new Row(CommittableFields.readWindowRow(in), in.readInt()));
        }

        @Override
        public SetWindowRow deserialize(SetWindowRow reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            serialize(deserialize(source), target);
        }

        @Override
        public TypeSerializerSnapshot<SetWindowRow> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<SetWindowRow> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}
