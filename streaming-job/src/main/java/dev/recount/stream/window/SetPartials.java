package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MetricSet;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetRules;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Local pre-aggregation (what Flink SQL calls the local phase of local-global aggregation): the de-dup operator adds
 * each unique, on-time event to a partial sum per (set, window, dimension values) of every set it counts for, and
 * sends the partial sums on instead of the events. The second shuffle and the window operator then see one record
 * per window key and de-dup subtask instead of one per event and set.
 *
 * <p>The rule that keeps the window operator's results exact: a window's partials leave <em>before</em> the
 * watermark that fires the window ({@link #takeFiredBy}, called before the watermark is forwarded), so the first
 * firing holds every on-time event, as it did when events travelled one by one. Sets have windows of their own sizes,
 * so the buffer is ordered by a window's last millisecond (the watermark that fires it), not by its start. Events for
 * a window that has fired already are not buffered at all (the caller sends them on at once, one partial each), so
 * each still re-fires its window with revision + 1. When more than {@code maxKeys} sums are buffered, all of them
 * leave early ({@link #takeAll}): that is always allowed — the window operator just adds sooner — and bounds the
 * memory.
 *
 * <p>An event of a key already buffered allocates nothing: its key is looked up with a probe whose dimension values
 * are read into a scratch array of its set (one per set), and its measures are added in place
 * ({@link MetricSet#add}).
 *
 * <p>What is buffered at a checkpoint is part of the operator's state ({@link #snapshot}, {@link #restore}), by set
 * name: a set's position may differ in the run that restores it.
 */
public final class SetPartials {
    private final JobSets sets;
    private final int maxKeys;
    /** A window's last millisecond → (set, dimension values) → sums. Ordered: a watermark fires a prefix. */
    private final TreeMap<Long, Map<Key, MeasureSums>> windows = new TreeMap<>();

    private int keys;
    /** Per set: the last millisecond of the window its last event went to, and that window's map. */
    private final long[] lastWindow;

    private final List<Map<Key, MeasureSums>> lastWindowMap;
    /** Per set: where an event's dimension values are read before the lookup. */
    private final String[][] scratch;

    private final Key probe = new Key(0, null, 0);

    public SetPartials(JobSets sets, int maxKeys) {
        if (maxKeys < 1) throw new IllegalArgumentException("maxKeys must be >= 1, got " + maxKeys);
        this.sets = sets;
        this.maxKeys = maxKeys;
        this.lastWindow = new long[sets.size()];
        this.lastWindowMap = new ArrayList<>(sets.size());
        this.scratch = new String[sets.size()][];
        for (int s = 0; s < sets.size(); s++) {
            lastWindowMap.add(null);
            scratch[s] = new String[sets.get(s).set().dimensions().size()];
        }
        forgetLastWindows();
    }

    /**
     * Adds {@code event} to the sum of its key in the set at {@code position}, window {@code windowStart}; true when
     * the buffer is over its size and should be emptied.
     */
    public boolean add(int position, long windowStart, AdEvent event) {
        SetRules rules = sets.get(position);
        long last = rules.time().lastMillis(windowStart);
        Map<Key, MeasureSums> window = lastWindowMap.get(position);
        if (window == null || lastWindow[position] != last) {
            window = windows.computeIfAbsent(last, w -> new HashMap<>());
            lastWindow[position] = last;
            lastWindowMap.set(position, window);
        }
        MetricSet set = rules.set();
        String[] dims = scratch[position];
        for (int i = 0; i < dims.length; i++) dims[i] = set.dimensionValue(event, i);
        probe.set = position;
        probe.dimensions = dims;
        probe.hash = Key.hash(position, dims);
        MeasureSums sums = window.get(probe);
        if (sums == null) {
            sums = set.newSums();
            window.put(new Key(position, dims.clone(), probe.hash), sums);
            keys++;
        }
        set.add(sums, event);
        return keys > maxKeys;
    }

    /** Removes and hands over the partials of every window whose last millisecond is at or before {@code watermark}. */
    public void takeFiredBy(long watermark, Consumer<SetPartial> out) {
        Iterator<Map.Entry<Long, Map<Key, MeasureSums>>> it = windows.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Map<Key, MeasureSums>> w = it.next();
            if (w.getKey() > watermark) break;
            emit(w.getKey(), w.getValue(), out);
            it.remove();
        }
        forgetLastWindows();
    }

    /** Removes and hands over every buffered partial. */
    public void takeAll(Consumer<SetPartial> out) {
        for (Map.Entry<Long, Map<Key, MeasureSums>> w : windows.entrySet()) emit(w.getKey(), w.getValue(), out);
        windows.clear();
        forgetLastWindows();
    }

    private void emit(long lastMillis, Map<Key, MeasureSums> window, Consumer<SetPartial> out) {
        for (Map.Entry<Key, MeasureSums> e : window.entrySet())
            out.accept(partial(lastMillis, e.getKey(), e.getValue()));
        keys -= window.size();
    }

    private SetPartial partial(long lastMillis, Key key, MeasureSums sums) {
        SetRules rules = sets.get(key.set);
        long windowStart = lastMillis - rules.time().sizeMillis() + 1;
        return new SetPartial(rules.name(), windowStart, key.dimensions, sums, null);
    }

    private void forgetLastWindows() {
        for (int s = 0; s < lastWindow.length; s++) {
            lastWindow[s] = Long.MIN_VALUE;
            lastWindowMap.set(s, null);
        }
    }

    /** How many (set, window, dimension values) sums are buffered. */
    public int size() {
        return keys;
    }

    /** The buffered partials, for a checkpoint (the buffer keeps them). */
    public List<SetPartial> snapshot() {
        List<SetPartial> all = new ArrayList<>(keys);
        for (Map.Entry<Long, Map<Key, MeasureSums>> w : windows.entrySet()) {
            for (Map.Entry<Key, MeasureSums> e : w.getValue().entrySet()) {
                all.add(partial(w.getKey(), e.getKey(), e.getValue()));
            }
        }
        return all;
    }

    /**
     * Adds a partial restored from a checkpoint; false (and nothing added) when this run does not compute its set (it
     * was removed from the definitions: its restored state is dropped).
     */
    public boolean restore(SetPartial p) {
        int position = sets.position(p.set);
        if (position < 0) return false;
        SetRules rules = sets.get(position);
        if (p.dimensions.length != rules.set().dimensions().size()
                || p.sums.sums.length != rules.set().measures().size()) {
            throw new IllegalStateException(
                    "restored sums of set " + p.set + " do not fit its definition " + rules.set() + ": " + p);
        }
        Map<Key, MeasureSums> window =
                windows.computeIfAbsent(rules.time().lastMillis(p.windowStart), w -> new HashMap<>());
        Key key = new Key(position, p.dimensions.clone(), Key.hash(position, p.dimensions));
        MeasureSums sums = window.get(key);
        if (sums == null) {
            window.put(key, rules.set().merge(rules.set().newSums(), p.sums));
            keys++;
        } else {
            rules.set().merge(sums, p.sums);
        }
        forgetLastWindows();
        return true;
    }

    /** (set position, dimension values); mutable only as the lookup probe, never once it is a map key. */
    private static final class Key {
        int set;
        String[] dimensions;
        int hash;

        Key(int set, String[] dimensions, int hash) {
            this.set = set;
            this.dimensions = dimensions;
            this.hash = hash;
        }

        static int hash(int set, String[] dimensions) {
            int h = set;
            for (String d : dimensions) h = 31 * h + d.hashCode();
            return h;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Key k) || k.set != set || k.hash != hash) return false;
            for (int i = 0; i < dimensions.length; i++) {
                if (!dimensions[i].equals(k.dimensions[i])) return false;
            }
            return true;
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    @Override
    public String toString() {
        return "SetPartials{" + keys + " sums in " + windows.size() + " windows}";
    }
}
