package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MetricSet;
import java.io.IOException;
import java.lang.reflect.Field;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The de-dup operator's buffered sums as the release before metric sets checkpointed them (its operator state
 * {@code window-partials}): state only, read once when such a checkpoint is restored and turned into the default
 * set's {@link SetPartial}s ({@link #toDefaultSet}); never written again.
 *
 * <p>Flink restores that state with the POJO serializer it was written with, which finds this class and its fields by
 * name: the name and the field names must stay. {@link #totals} was core's {@code MetricsAccumulator}, a POJO of two
 * fields ({@code long[] sums} in the default set's measure order, {@code long spendCarry}); it is read by those
 * field names, so this module does not depend on the class, but Flink needs the class itself (by its name, in core)
 * on the classpath to read such a checkpoint. Without it, drain the previous release with {@code --bounded} before
 * upgrading (streaming-job/README.md, "Upgrading").
 */
public final class WindowPartial {
    public long windowStart;
    public String campaignId;
    public String channelId;
    /** The previous release's accumulator object, as its POJO serializer restores it. */
    public Object totals;
    /** Never set in buffered sums; kept because the POJO had it. */
    public AdEvent event;

    public WindowPartial() {}

    /** The same sums as a partial of {@code defaultSet}, whose first five measures are the previous release's. */
    public SetPartial toDefaultSet(MetricSet defaultSet) {
        if (!defaultSet.isDefault()
                || defaultSet.measures().size() != KeyWindows.DEFAULT_ONLY_MEASURES
                || defaultSet.measures().get(KeyWindows.DEFAULT_ONLY_SPEND).isCount()) {
            throw new IllegalStateException(
                    "not the default set's layout of the release before metric sets: " + defaultSet);
        }
        long[] sums;
        long spendCarry;
        try {
            Field sumsField = totals.getClass().getField("sums");
            Field carryField = totals.getClass().getField("spendCarry");
            sums = ((long[]) sumsField.get(totals)).clone();
            spendCarry = carryField.getLong(totals);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the previous release's buffered sums " + totals, e);
        }
        if (sums.length != KeyWindows.DEFAULT_ONLY_MEASURES) {
            throw new IllegalStateException("the previous release's sums have " + sums.length + " measures, not "
                    + KeyWindows.DEFAULT_ONLY_MEASURES);
        }
        long[] carries = new long[KeyWindows.DEFAULT_ONLY_MEASURES];
        carries[KeyWindows.DEFAULT_ONLY_SPEND] = spendCarry;
        return new SetPartial(
                defaultSet.name(),
                windowStart,
                new String[] {campaignId, channelId},
                new MeasureSums(sums, carries),
                null);
    }

    /**
     * What the state {@code window-partials} is registered with after the upgrade: the previous release's objects are
     * read by the serializer they were written with (Flink restores operator state eagerly), this one only answers
     * that they may be migrated, and then writes the state as it stays from then on, empty.
     */
    public static final class RestoredOnly extends TypeSerializerSingleton<WindowPartial> {
        private static final long serialVersionUID = 1L;
        public static final RestoredOnly INSTANCE = new RestoredOnly();

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public WindowPartial createInstance() {
            return new WindowPartial();
        }

        @Override
        public WindowPartial copy(WindowPartial from) {
            return from;
        }

        @Override
        public WindowPartial copy(WindowPartial from, WindowPartial reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(WindowPartial record, DataOutputView target) {
            throw new UnsupportedOperationException(
                    "the previous release's buffered sums are converted, never written");
        }

        @Override
        public WindowPartial deserialize(DataInputView source) throws IOException {
            throw new IOException("the previous release's buffered sums are written by its own serializer only");
        }

        @Override
        public WindowPartial deserialize(WindowPartial reuse, DataInputView source) throws IOException {
            return deserialize(source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) {
            throw new UnsupportedOperationException("the previous release's buffered sums are never copied");
        }

        @Override
        public TypeSerializerSnapshot<WindowPartial> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    /** Compatible with the previous release's POJO snapshot after "migration" (the state is emptied right away). */
    public static final class Snapshot implements TypeSerializerSnapshot<WindowPartial> {
        @Override
        public int getCurrentVersion() {
            return 1;
        }

        @Override
        public void writeSnapshot(DataOutputView out) {}

        @Override
        public void readSnapshot(int version, DataInputView in, ClassLoader classLoader) {}

        @Override
        public TypeSerializer<WindowPartial> restoreSerializer() {
            return RestoredOnly.INSTANCE;
        }

        @Override
        public TypeSerializerSchemaCompatibility<WindowPartial> resolveSchemaCompatibility(
                TypeSerializerSnapshot<WindowPartial> oldSnapshot) {
            return oldSnapshot instanceof Snapshot
                    ? TypeSerializerSchemaCompatibility.compatibleAsIs()
                    : TypeSerializerSchemaCompatibility.compatibleAfterMigration();
        }
    }
}
