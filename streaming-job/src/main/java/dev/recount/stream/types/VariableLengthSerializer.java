package dev.recount.stream.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * What the job's hand-written serializers of records with strings share: variable length, no instance to reuse,
 * equal to any serializer of the same class, a {@link CompactStrings} of their own per instance (so one per thread:
 * {@link #duplicate()} makes a fresh one). A subclass writes its format ({@code serialize}, {@code deserialize}), its
 * copy and its snapshot.
 */
public abstract class VariableLengthSerializer<T> extends TypeSerializer<T> {
    private static final long serialVersionUID = 1L;

    private transient CompactStrings strings;

    /** A new serializer of this kind, with scratch state of its own. */
    protected abstract VariableLengthSerializer<T> newInstance();

    @Override
    public final TypeSerializer<T> duplicate() {
        return newInstance();
    }

    @Override
    public final T createInstance() {
        return null;
    }

    @Override
    public final T copy(T from, T reuse) {
        return copy(from);
    }

    @Override
    public final int getLength() {
        return -1;
    }

    @Override
    public final T deserialize(T reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public final void copy(DataInputView in, DataOutputView out) throws IOException {
        serialize(deserialize(in), out);
    }

    /** This instance's string table (not shared between threads). */
    protected final CompactStrings strings() {
        if (strings == null) strings = new CompactStrings();
        return strings;
    }

    @Override
    public final boolean equals(Object o) {
        return o != null && o.getClass() == getClass();
    }

    @Override
    public final int hashCode() {
        return getClass().hashCode();
    }
}
