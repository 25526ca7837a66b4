package dev.recount.stream.window;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.EventTime;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.sink.SetWindowRow;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tumbling event-time windows of every metric set per (set, dimension values), over the de-dup operator's partial
 * sums (CONTRACT §2–§3). Each set's windows have its own size; the rules are core's {@link EventTime} of the set,
 * stated here in full:
 *
 * <ul>
 *   <li>a window fires when the watermark reaches its last millisecond (revision 1, its totals);</li>
 *   <li>a partial for a window that has fired and is within allowed lateness re-fires it at once with the full
 *       totals, revision + 1 (if the watermark has not reached the window yet — right after a restore, when
 *       there is none — it fires when it does);</li>
 *   <li>a window is forgotten when it is closed (the watermark passed its last millisecond + allowed lateness); a
 *       partial for it after that is too late and goes to {@link #LATE_AT_WINDOW} (the safety net; the de-dup
 *       operator routes too-late events itself).</li>
 * </ul>
 *
 * <p>Why not Flink's {@code WindowOperator}: it keeps a state entry per key <em>and window</em> (and one for the
 * revision), plus a firing and a cleanup timer each — ~550 bytes per key and window, 200+ MB at 100,000 keys with
 * 3–4 windows alive. Here a key has one entry, {@link KeyWindows}, with its few live windows in small arrays, and no
 * timers: every window of a set is aligned, so an index from a window's last millisecond to the keys that have that
 * window ({@link #keysOf}, rebuilt from the state after a restore) tells a watermark what to fire and what to forget,
 * whatever the sizes of the sets' windows. All sets share the allowed lateness, so the order of last milliseconds is
 * the order in which windows close too.
 *
 * <p>Keys are {@link SetKeys}' (the default set's are the release before metric sets' own), keyed by
 * {@link #keySelector}. State of a set this run no longer computes (removed from the definitions) is dropped when the
 * operator opens.
 */
public final class WindowMetricsOperator extends AbstractStreamOperator<SetWindowRow>
        implements OneInputStreamOperator<SetPartial, SetWindowRow> {
    private static final long serialVersionUID = 2L;
    private static final Logger LOG = LoggerFactory.getLogger(WindowMetricsOperator.class);

    /** Partials this operator found too late; the de-dup operator should have caught them all. */
    public static final OutputTag<SetPartial> LATE_AT_WINDOW = new OutputTag<>("late-at-window", SetPartial.TYPE);

    public static final String LATE_REFIRINGS_METRIC = JobTotals.LATE_REFIRINGS;
    public static final String FIRINGS_METRIC = JobTotals.WINDOW_FIRINGS;
    /** Accumulator: the largest window end this run fired; a finished --bounded run closes windows up to it. */
    public static final String MAX_WINDOW_END_ACCUMULATOR = "maxFiredWindowEnd";

    static final String STATE = "key-windows";

    private final JobSets sets;

    private transient ValueState<KeyWindows> state;
    /** A window's last millisecond → the keys that have that window alive. Not state: rebuilt from it on restore. */
    private transient TreeMap<Long, List<Tuple2<String, String>>> keysOf;
    /** Windows whose last millisecond is before this have been through a firing pass already. */
    private transient long fireFrom;

    private transient long watermark;
    /** Per set position: its own counters (metric group {@code metric_set=<name>}). */
    private transient Counter[] setFirings;

    private transient Counter[] setLateRefirings;
    private transient Counter lateRefirings;
    private transient Counter firings;
    private transient LongMaximum maxWindowEnd;
    private transient LongCounter firingsTotal;
    private transient LongCounter lateRefiringsTotal;

    public WindowMetricsOperator(JobSets sets) {
        this.sets = sets;
    }

    /** The key this operator must be keyed by ({@link SetKeys#WINDOW_KEY}). */
    public static KeySelector<SetPartial, Tuple2<String, String>> keySelector(JobSets sets) {
        return new PartialKey(sets);
    }

    private static final class PartialKey implements KeySelector<SetPartial, Tuple2<String, String>> {
        private static final long serialVersionUID = 1L;
        private final JobSets sets;

        PartialKey(JobSets sets) {
            this.sets = sets;
        }

        @Override
        public Tuple2<String, String> getKey(SetPartial p) {
            SetRules rules = sets.byName(p.set);
            if (rules == null)
                throw new IllegalStateException("a partial of set " + p.set + ", which this run does not compute");
            return SetKeys.windowKey(rules, p.dimensions);
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        state = getPartitionedState(new ValueStateDescriptor<>(STATE, KeyWindows.Serializer.INSTANCE));
        keysOf = new TreeMap<>();
        fireFrom = Long.MIN_VALUE;
        watermark = Long.MIN_VALUE;
        long dropped = 0;
        org.apache.flink.runtime.state.KeyedStateBackend<Tuple2<String, String>> backend = getKeyedStateBackend();
        try (Stream<Tuple2<String, String>> keys = backend.getKeys(STATE, VoidNamespace.INSTANCE)) {
            List<Tuple2<String, String>> restored = keys.toList(); // not while iterating: reads below touch the map
            for (Tuple2<String, String> key : restored) {
                setCurrentKey(key);
                SetRules rules = sets.ofKeyPart(key.f0);
                if (rules == null) {
                    state.clear(); // a set removed from the definitions: its windows are not computed any more
                    dropped++;
                    continue;
                }
                KeyWindows w = state.value();
                w.key = key;
                for (int i = 0; i < w.size; i++) {
                    if (w.sums[i].sums.length != rules.set().measures().size()) {
                        // db's registry refuses such a start first; state must not be summed into another layout.
                        throw new IllegalStateException("restored windows of metric set " + rules.name() + " hold "
                                + w.sums[i].sums.length + " measures, its definition "
                                + rules.set().measures().size()
                                + ": its measures changed in place");
                    }
                    index(rules.time().lastMillis(w.starts[i]), key);
                }
            }
        }
        if (dropped > 0) LOG.info("dropped the window state of {} keys of metric sets no longer defined", dropped);
        MetricGroup group = getMetricGroup();
        lateRefirings = group.counter(LATE_REFIRINGS_METRIC);
        firings = group.counter(FIRINGS_METRIC);
        setFirings = new Counter[sets.size()];
        setLateRefirings = new Counter[sets.size()];
        for (int s = 0; s < sets.size(); s++) {
            MetricGroup setGroup = JobTotals.setGroup(group, sets.get(s).name());
            setFirings[s] = setGroup.counter(FIRINGS_METRIC);
            setLateRefirings[s] = setGroup.counter(LATE_REFIRINGS_METRIC);
        }
        maxWindowEnd = new LongMaximum();
        getRuntimeContext().addAccumulator(MAX_WINDOW_END_ACCUMULATOR, maxWindowEnd);
        firingsTotal = JobTotals.counter(getRuntimeContext(), FIRINGS_METRIC);
        lateRefiringsTotal = JobTotals.counter(getRuntimeContext(), LATE_REFIRINGS_METRIC);
    }

    @Override
    public void processElement(StreamRecord<SetPartial> record) throws Exception {
        SetPartial p = record.getValue();
        Tuple2<String, String> key = key();
        SetRules rules = sets.ofKeyPart(key.f0);
        EventTime time = rules.time();
        if (time.isClosed(p.windowStart, watermark)) {
            output.collect(LATE_AT_WINDOW, record);
            return;
        }
        MetricSet set = rules.set();
        KeyWindows w = state.value();
        if (w == null) {
            w = new KeyWindows();
            w.key = key; // the key object the state entry keeps: the index shares it, no copy of its strings
        } else if (w.key == null) {
            w.key = key;
        }
        @SuppressWarnings("unchecked")
        Tuple2<String, String> indexKey = (Tuple2<String, String>) w.key;
        int i = w.find(p.windowStart);
        if (i < 0) {
            i = w.add(p.windowStart, set.newSums());
            index(time.lastMillis(p.windowStart), indexKey);
        }
        set.merge(w.sums[i], p.sums);
        w.pending[i] = true;
        if (time.hasFired(p.windowStart, watermark)) fire(rules, w, i, indexKey); // fired already: revision + 1
        state.update(w);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        long wm = mark.getTimestamp();
        if (wm > watermark) {
            watermark = wm;
            // Every window whose last millisecond the watermark has reached, of any set, and not passed before.
            Map<Long, List<Tuple2<String, String>>> due =
                    wm < fireFrom ? Map.of() : keysOf.subMap(fireFrom, true, wm, true);
            for (Map.Entry<Long, List<Tuple2<String, String>>> e : due.entrySet()) {
                for (Tuple2<String, String> key : e.getValue()) {
                    setCurrentKey(key);
                    SetRules rules = sets.ofKeyPart(key.f0);
                    KeyWindows w = state.value();
                    int i = w.find(startOf(rules, e.getKey()));
                    if (w.pending[i]) {
                        fire(rules, w, i, key);
                        state.update(w);
                    }
                }
            }
            if (wm != Long.MAX_VALUE && wm >= fireFrom) fireFrom = wm + 1;
            forgetClosed(wm);
        }
        super.processWatermark(mark);
    }

    /** Forgets the windows the watermark has closed: their last millisecond + allowed lateness is at or before it. */
    private void forgetClosed(long wm) throws Exception {
        for (Iterator<Map.Entry<Long, List<Tuple2<String, String>>>> it =
                        keysOf.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<Long, List<Tuple2<String, String>>> e = it.next();
            long lastMillis = e.getKey();
            // Every set has the same allowed lateness: whether a window is closed depends on its last millisecond
            // alone, so the first key of the entry decides for all of them.
            SetRules first = sets.ofKeyPart(e.getValue().get(0).f0);
            if (!first.time().isClosed(startOf(first, lastMillis), wm)) break;
            for (Tuple2<String, String> key : e.getValue()) {
                setCurrentKey(key);
                KeyWindows w = state.value();
                w.remove(w.find(startOf(sets.ofKeyPart(key.f0), lastMillis)));
                if (w.size == 0) {
                    state.clear();
                } else {
                    state.update(w);
                }
            }
            it.remove();
        }
    }

    private static long startOf(SetRules rules, long lastMillis) {
        return lastMillis - rules.time().sizeMillis() + 1;
    }

    private void fire(SetRules rules, KeyWindows w, int i, Tuple2<String, String> key) {
        int revision = ++w.revisions[i];
        w.pending[i] = false;
        int position = sets.position(rules.name());
        firings.inc();
        setFirings[position].inc();
        firingsTotal.add(1L);
        if (revision > 1) {
            lateRefirings.inc();
            setLateRefirings[position].inc();
            lateRefiringsTotal.add(1L);
        }
        long start = w.starts[i];
        long end = rules.windowEnd(start);
        maxWindowEnd.add(end);
        WindowKey windowKey = WindowKey.of(start, SetKeys.dimensions(rules, key.f0, key.f1));
        output.collect(new StreamRecord<>(
                new SetWindowRow(
                        rules.name(),
                        new StreamWindowMetricsTable.Row(
                                new WindowRow(windowKey, end, rules.set().values(w.sums[i])), revision)),
                end - 1));
    }

    private void index(long lastMillis, Tuple2<String, String> key) {
        keysOf.computeIfAbsent(lastMillis, s -> new ArrayList<>()).add(key);
    }

    @SuppressWarnings("unchecked")
    private Tuple2<String, String> key() {
        return (Tuple2<String, String>) getCurrentKey();
    }

    /** For tests: how many (key, window) pairs are alive. */
    int liveWindows() {
        return keysOf.values().stream().mapToInt(List::size).sum();
    }
}
