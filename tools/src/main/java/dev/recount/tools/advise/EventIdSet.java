package dev.recount.tools.advise;

/**
 * The event_ids {@code advise} has seen, as 64-bit hashes in an open-addressing table: about 16 bytes an id where a
 * {@code HashSet<String>} of UUIDs costs some 120, so tens of millions of records fit in an ordinary heap.
 *
 * <p>Two different ids with the same 64-bit hash would make the second count as a repeat: for 50 million ids the
 * chance that this happens even once is below 1 in 10,000, and it would move one event out of a sample of millions,
 * which no percentile or share the advice prints can show.
 */
final class EventIdSet {
    private static final long EMPTY = 0L;
    /** Stands for the id whose hash is {@link #EMPTY}, which the table cannot hold. */
    private boolean holdsEmptyHash;

    private long[] table = new long[1 << 16];
    private int size;

    /** Adds {@code eventId}; false when it (or, rarely, an id of the same hash) was added before. */
    boolean add(String eventId) {
        long h = hash(eventId);
        if (h == EMPTY) {
            if (holdsEmptyHash) return false;
            holdsEmptyHash = true;
            return true;
        }
        if (2L * (size + 1) > table.length) grow();
        if (!insert(table, h)) return false;
        size++;
        return true;
    }

    private static boolean insert(long[] t, long h) {
        int mask = t.length - 1;
        for (int i = (int) (h ^ (h >>> 32)) & mask; ; i = (i + 1) & mask) {
            if (t[i] == h) return false;
            if (t[i] == EMPTY) {
                t[i] = h;
                return true;
            }
        }
    }

    private void grow() {
        long[] bigger = new long[table.length * 2];
        for (long h : table) {
            if (h != EMPTY) insert(bigger, h);
        }
        table = bigger;
    }

    /** FNV-1a over the UTF-16 chars, then a 64-bit finalizer (MurmurHash3's fmix64) to spread the bits. */
    static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
