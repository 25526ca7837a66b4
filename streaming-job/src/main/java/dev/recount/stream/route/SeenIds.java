package dev.recount.stream.route;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The ids one de-dup bucket remembers, as bytes rather than objects: an open-addressing hash table (linear probing)
 * of {@link IdDigest}s, each with the event time at which it may be forgotten. 24 bytes per slot in one
 * {@code long[]}, kept 40–{@value #MAX_LOAD_PERCENT} % full, so ~50 bytes per remembered id; as Flink
 * {@code MapState<String, …>} plus a due-list entry an id cost ~150 bytes in a dozen objects, and a checkpoint
 * wrote the id strings one by one.
 *
 * <p>Forgetting is {@link #forgetUpTo}: every forgetAt time has the list of its slots (the due index, rebuilt from
 * the slots, never stored), so forgetting touches exactly the expired slots — no scan — and turns
 * them into tombstones, which later inserts reuse; the table is rebuilt (without tombstones, at a size fitting its
 * live ids) when they pile up. (A scan per cleanup step visited every live id at every step, ~70 times per id in
 * a replay of skewed partitions, whose live ids span far more than one horizon.) Mutable: the
 * de-dup operator changes it in place and hands it back to its state; {@link Serializer#copy} copies it deeply,
 * which is what the heap state backend's copy-on-write needs while an asynchronous snapshot reads it.
 */
public final class SeenIds {
    private static final int SLOT = 3; // hi, lo, forgetAt
    private static final long EMPTY = Long.MIN_VALUE;
    private static final long TOMBSTONE = Long.MIN_VALUE + 1;
    static final int MAX_LOAD_PERCENT = 60;
    private static final int MIN_CAPACITY = 16;

    /** SLOT longs per slot; a slot is free when its forgetAt is {@link #EMPTY} or {@link #TOMBSTONE}. */
    private long[] slots;

    private int live;
    private int tombstones;
    /**
     * The due index: forget times in ascending order, each with the slots holding ids due then. Derived from
     * {@link #slots} and rebuilt with them. Sorted arrays rather than a TreeMap (a fifth of the de-dup thread):
     * a new id's forget time is nearly always the latest, checked first; any other is found by binary search.
     */
    private long[] dueTimes = new long[4];

    private SlotList[] dueSlots = new SlotList[4];
    private int dueCount;

    public SeenIds() {
        this(MIN_CAPACITY);
    }

    private SeenIds(int capacity) {
        slots = new long[capacity * SLOT];
        clearSlots(slots);
    }

    public int size() {
        return live;
    }

    public boolean isEmpty() {
        return live == 0;
    }

    /** {@link #add}: the id was remembered already (a copy). */
    public static final int COPY = 0;
    /** {@link #add}: a new id, due at a time this table had ids for already. */
    public static final int ADDED = 1;
    /** {@link #add}: a new id, and the first one due at its forgetAt: whoever forgets must learn about that time. */
    public static final int ADDED_NEW_DUE_TIME = 2;

    /**
     * Remembers {@code digest} until {@code forgetAt} if it is not remembered yet.
     *
     * @return {@link #COPY}, {@link #ADDED} or {@link #ADDED_NEW_DUE_TIME}
     */
    public int add(IdDigest digest, long forgetAt) {
        if (forgetAt <= TOMBSTONE) throw new IllegalArgumentException("forgetAt out of range: " + forgetAt);
        int capacity = slots.length / SLOT;
        int mask = capacity - 1;
        int firstFree = -1;
        for (int i = index(digest.lo, mask); ; i = (i + 1) & mask) {
            int at = i * SLOT;
            long f = slots[at + 2];
            if (f == EMPTY) {
                if (firstFree < 0) firstFree = at;
                break;
            }
            if (f == TOMBSTONE) {
                if (firstFree < 0) firstFree = at;
            } else if (slots[at] == digest.hi && slots[at + 1] == digest.lo) {
                return COPY;
            }
        }
        if (slots[firstFree + 2] == TOMBSTONE) tombstones--;
        slots[firstFree] = digest.hi;
        slots[firstFree + 1] = digest.lo;
        slots[firstFree + 2] = forgetAt;
        live++;
        int d = dueCount - 1;
        if (d >= 0 && dueTimes[d] > forgetAt) {
            // Not the latest time: ids of a partition read behind the others are due far before it (hundreds of
            // steps in a replay of skewed partitions), so search rather than walk back from the end.
            int found = Arrays.binarySearch(dueTimes, 0, dueCount, forgetAt);
            d = found >= 0 ? found : -found - 2;
        }
        boolean newDueTime = d < 0 || dueTimes[d] != forgetAt;
        if (newDueTime) insertDueTime(++d, forgetAt);
        dueSlots[d].add(firstFree);
        if ((live + tombstones) * 100L > (long) capacity * MAX_LOAD_PERCENT) rebuild(live + 1);
        return newDueTime ? ADDED_NEW_DUE_TIME : ADDED;
    }

    /** Forgets every id whose forgetAt is at or before {@code time}; returns how many. */
    public int forgetUpTo(long time) {
        if (dueCount == 0 || dueTimes[0] > time) return 0;
        int forgotten = 0;
        int d = 0;
        for (; d < dueCount && dueTimes[d] <= time; d++) {
            SlotList list = dueSlots[d];
            for (int k = 0; k < list.size; k++) slots[list.slots[k] + 2] = TOMBSTONE;
            forgotten += list.size;
        }
        if (d > 0) {
            System.arraycopy(dueTimes, d, dueTimes, 0, dueCount - d);
            System.arraycopy(dueSlots, d, dueSlots, 0, dueCount - d);
            Arrays.fill(dueSlots, dueCount - d, dueCount, null);
            dueCount -= d;
        }
        live -= forgotten;
        tombstones += forgotten;
        int capacity = slots.length / SLOT;
        // Rebuild when tombstones dominate or the table is far too big for what it holds.
        if (tombstones > live || (capacity > MIN_CAPACITY && live * 100L < (long) capacity * MAX_LOAD_PERCENT / 8)) {
            rebuild(live);
        }
        return forgotten;
    }

    /** The earliest forgetAt this table has ids for; {@code Long.MAX_VALUE} when it has none. */
    public long firstDueTime() {
        return dueCount == 0 ? Long.MAX_VALUE : dueTimes[0];
    }

    /**
     * Re-inserts the live slots into a table sized for {@code expected} ids at 40 % load. The due index lists every
     * live slot exactly once (forgetting drops whole lists, a reused tombstone joins its new time's list), so it is
     * walked instead of the old table, and each list is rewritten in place with the slots' new offsets: the index
     * stays in time order without being rebuilt (a sorted map of boxed times was a tenth of the de-dup thread).
     */
    private void rebuild(int expected) {
        long[] old = slots;
        slots = new long[capacityFor(expected) * SLOT];
        clearSlots(slots);
        int mask = slots.length / SLOT - 1;
        for (int d = 0; d < dueCount; d++) {
            SlotList list = dueSlots[d];
            for (int k = 0; k < list.size; k++) {
                int from = list.slots[k];
                int i = index(old[from + 1], mask);
                while (slots[i * SLOT + 2] != EMPTY) i = (i + 1) & mask;
                System.arraycopy(old, from, slots, i * SLOT, SLOT);
                list.slots[k] = i * SLOT;
            }
        }
        tombstones = 0;
    }

    private static int capacityFor(int expected) {
        int capacity = MIN_CAPACITY;
        while ((long) capacity * MAX_LOAD_PERCENT < expected * 150L) capacity <<= 1;
        return capacity;
    }

    private void insertDueTime(int at, long time) {
        if (dueCount == dueTimes.length) {
            dueTimes = Arrays.copyOf(dueTimes, dueCount * 2);
            dueSlots = Arrays.copyOf(dueSlots, dueCount * 2);
        }
        System.arraycopy(dueTimes, at, dueTimes, at + 1, dueCount - at);
        System.arraycopy(dueSlots, at, dueSlots, at + 1, dueCount - at);
        dueTimes[at] = time;
        dueSlots[at] = new SlotList();
        dueCount++;
    }

    /** Builds the due index from the slots (after reading a table, which stores only the slots). */
    private void indexDueTimes() {
        TreeMap<Long, SlotList> byTime = new TreeMap<>();
        for (int at = 0; at < slots.length; at += SLOT) {
            long f = slots[at + 2];
            if (f > TOMBSTONE) byTime.computeIfAbsent(f, t -> new SlotList()).add(at);
        }
        int n = Math.max(4, byTime.size());
        dueTimes = new long[n];
        dueSlots = new SlotList[n];
        dueCount = 0;
        for (Map.Entry<Long, SlotList> e : byTime.entrySet()) {
            dueTimes[dueCount] = e.getKey();
            dueSlots[dueCount++] = e.getValue();
        }
    }

    /** The forgetAt times this table has ids for, ascending. */
    public java.util.List<Long> dueTimes() {
        java.util.List<Long> times = new java.util.ArrayList<>(dueCount);
        for (int d = 0; d < dueCount; d++) times.add(dueTimes[d]);
        return times;
    }

    /** A growable list of slot offsets. */
    private static final class SlotList {
        int[] slots = new int[4];
        int size;

        void add(int slot) {
            if (size == slots.length) slots = Arrays.copyOf(slots, size * 2);
            slots[size++] = slot;
        }

        SlotList copy() {
            SlotList c = new SlotList();
            c.slots = Arrays.copyOf(slots, Math.max(size, 1));
            c.size = size;
            return c;
        }
    }

    private static int index(long lo, int mask) {
        return (int) (lo ^ (lo >>> 32)) & mask;
    }

    private static void clearSlots(long[] slots) {
        for (int at = 2; at < slots.length; at += SLOT) slots[at] = EMPTY;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SeenIds other) || other.live != live) return false;
        return Arrays.equals(liveSlotsSorted(), other.liveSlotsSorted());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(liveSlotsSorted());
    }

    private long[] liveSlotsSorted() {
        long[][] rows = new long[live][];
        int n = 0;
        for (int at = 0; at < slots.length; at += SLOT) {
            if (slots[at + 2] > TOMBSTONE) rows[n++] = Arrays.copyOfRange(slots, at, at + SLOT);
        }
        Arrays.sort(rows, (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        long[] flat = new long[live * SLOT];
        for (int i = 0; i < live; i++) System.arraycopy(rows[i], 0, flat, i * SLOT, SLOT);
        return flat;
    }

    @Override
    public String toString() {
        return "SeenIds{" + live + " ids, capacity " + slots.length / SLOT + '}';
    }

    /**
     * Writes only the live slots (digest and forgetAt: 24 bytes per id), so a checkpoint costs bytes per id and
     * no per-id serializer calls; reading rebuilds the table.
     */
    public static final class Serializer extends TypeSerializerSingleton<SeenIds> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public SeenIds createInstance() {
            return new SeenIds();
        }

        @Override
        public SeenIds copy(SeenIds from) {
            SeenIds copy = new SeenIds(MIN_CAPACITY);
            copy.slots = from.slots.clone();
            copy.live = from.live;
            copy.tombstones = from.tombstones;
            copy.dueTimes = from.dueTimes.clone();
            copy.dueSlots = new SlotList[from.dueSlots.length];
            for (int d = 0; d < from.dueCount; d++) copy.dueSlots[d] = from.dueSlots[d].copy();
            copy.dueCount = from.dueCount;
            return copy;
        }

        @Override
        public SeenIds copy(SeenIds from, SeenIds reuse) {
            return copy(from);
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(SeenIds ids, DataOutputView out) throws IOException {
            out.writeInt(ids.live);
            byte[] buffer = new byte[Math.min(ids.live, 4096) * SLOT * Long.BYTES];
            java.nio.ByteBuffer bytes = java.nio.ByteBuffer.wrap(buffer);
            for (int at = 0; at < ids.slots.length; at += SLOT) {
                if (ids.slots[at + 2] <= TOMBSTONE) continue;
                if (!bytes.hasRemaining()) {
                    out.write(buffer, 0, bytes.position());
                    bytes.clear();
                }
                bytes.putLong(ids.slots[at]).putLong(ids.slots[at + 1]).putLong(ids.slots[at + 2]);
            }
            out.write(buffer, 0, bytes.position());
        }

        @Override
        public SeenIds deserialize(DataInputView in) throws IOException {
            int n = in.readInt();
            if (n < 0) throw new IOException("corrupt de-dup state: " + n + " ids");
            SeenIds ids = new SeenIds(MIN_CAPACITY);
            ids.rebuildEmpty(n);
            int mask = ids.slots.length / SLOT - 1;
            for (int k = 0; k < n; k++) {
                long hi = in.readLong();
                long lo = in.readLong();
                long forgetAt = in.readLong();
                int i = index(lo, mask);
                while (ids.slots[i * SLOT + 2] != EMPTY) i = (i + 1) & mask;
                ids.slots[i * SLOT] = hi;
                ids.slots[i * SLOT + 1] = lo;
                ids.slots[i * SLOT + 2] = forgetAt;
            }
            ids.live = n;
            ids.indexDueTimes();
            return ids;
        }

        @Override
        public SeenIds deserialize(SeenIds reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            int n = source.readInt();
            target.writeInt(n);
            target.write(source, n * SLOT * Long.BYTES);
        }

        @Override
        public TypeSerializerSnapshot<SeenIds> snapshotConfiguration() {
            return new SerializerSnapshot();
        }
    }

    /** Serializer snapshot: the format has no parameters; a new format would need a new snapshot version. */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<SeenIds> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }

    private void rebuildEmpty(int expected) {
        slots = new long[capacityFor(expected) * SLOT];
        clearSlots(slots);
        tombstones = 0;
        live = 0;
    }
}
