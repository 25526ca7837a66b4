package dev.recount.stream.window;

import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.metrics.JobTotals;
import java.time.Duration;
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
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Tumbling event-time windows per (campaign, channel) over the de-dup operator's partial sums (CONTRACT §2–§3), with
 * Flink's window semantics, stated here in full:
 *
 * <ul>
 *   <li>a window fires when the watermark reaches its last millisecond (revision 1, its totals);</li>
 *   <li>a partial for a window that has fired and is within allowed lateness re-fires it at once with the full
 *       totals, revision + 1 (if the watermark has not reached the window yet — right after a restore, when
 *       there is none — it fires when it does);</li>
 *   <li>a window is forgotten when the watermark passes its last millisecond + allowed lateness; a partial for it
 *       after that is too late and goes to {@link #LATE_AT_WINDOW} (the safety net; the de-dup
 *       operator routes too-late events itself).</li>
 * </ul>
 *
 * <p>Why not Flink's {@code WindowOperator}: it keeps a state entry per key <em>and window</em> (and one for the
 * revision), plus a firing and a cleanup timer each — ~550 bytes per key and window, 200+ MB at 100,000 keys with
 * 3–4 windows alive. Here a key has one entry, {@link KeyWindows}, with its few live windows in small arrays, and no
 * timers: all keys' windows are aligned, so an index from window start to the keys that have that window
 * ({@link #keysOf}, rebuilt from the state after a restore) tells a watermark what to fire and what to forget.
 */
public final class WindowMetricsOperator extends AbstractStreamOperator<StreamWindowMetricsTable.Row>
        implements OneInputStreamOperator<WindowPartial, StreamWindowMetricsTable.Row> {
    private static final long serialVersionUID = 1L;

    /** Partials this operator found too late; the de-dup operator should have caught them all. */
    public static final OutputTag<WindowPartial> LATE_AT_WINDOW =
            new OutputTag<>("late-at-window", TypeInformation.of(WindowPartial.class));

    public static final String LATE_REFIRINGS_METRIC = JobTotals.LATE_REFIRINGS;
    public static final String FIRINGS_METRIC = JobTotals.WINDOW_FIRINGS;
    /** Accumulator: the largest window end this run fired; a finished --bounded run closes windows up to it. */
    public static final String MAX_WINDOW_END_ACCUMULATOR = "maxFiredWindowEnd";

    static final String STATE = "key-windows";

    private final WindowAlignment windows;
    private final long allowedLatenessMillis;

    private transient ValueState<KeyWindows> state;
    /** Window start → the keys that have that window alive. Not state: rebuilt from it on restore. */
    private transient TreeMap<Long, List<Tuple2<String, String>>> keysOf;
    /** Windows starting before this have been through a firing pass already. */
    private transient long fireFrom;

    private transient long watermark;
    private transient Counter lateRefirings;
    private transient Counter firings;
    private transient LongMaximum maxWindowEnd;
    private transient LongCounter firingsTotal;
    private transient LongCounter lateRefiringsTotal;

    public WindowMetricsOperator(WindowAlignment windows, Duration allowedLateness) {
        this.windows = windows;
        this.allowedLatenessMillis = allowedLateness.toMillis();
    }

    @Override
    public void open() throws Exception {
        super.open();
        state = getPartitionedState(new ValueStateDescriptor<>(STATE, KeyWindows.Serializer.INSTANCE));
        keysOf = new TreeMap<>();
        fireFrom = Long.MIN_VALUE;
        watermark = Long.MIN_VALUE;
        org.apache.flink.runtime.state.KeyedStateBackend<Tuple2<String, String>> backend = getKeyedStateBackend();
        try (Stream<Tuple2<String, String>> keys = backend.getKeys(STATE, VoidNamespace.INSTANCE)) {
            List<Tuple2<String, String>> restored = keys.toList(); // not while iterating: reads below touch the map
            for (Tuple2<String, String> key : restored) {
                setCurrentKey(key);
                KeyWindows w = state.value();
                w.key = key;
                for (int i = 0; i < w.size; i++) index(w.starts[i], key);
            }
        }
        lateRefirings = getMetricGroup().counter(LATE_REFIRINGS_METRIC);
        firings = getMetricGroup().counter(FIRINGS_METRIC);
        maxWindowEnd = new LongMaximum();
        getRuntimeContext().addAccumulator(MAX_WINDOW_END_ACCUMULATOR, maxWindowEnd);
        firingsTotal = JobTotals.counter(getRuntimeContext(), FIRINGS_METRIC);
        lateRefiringsTotal = JobTotals.counter(getRuntimeContext(), LATE_REFIRINGS_METRIC);
    }

    @Override
    public void processElement(StreamRecord<WindowPartial> record) throws Exception {
        WindowPartial p = record.getValue();
        long lastMillis = p.windowStart + windows.sizeMillis() - 1;
        if (lastMillis + allowedLatenessMillis <= watermark) {
            output.collect(LATE_AT_WINDOW, record);
            return;
        }
        KeyWindows w = state.value();
        if (w == null) {
            w = new KeyWindows();
            w.key = key(); // the key object the state entry keeps: the index shares it, no copy of its strings
        } else if (w.key == null) {
            w.key = key();
        }
        @SuppressWarnings("unchecked")
        Tuple2<String, String> indexKey = (Tuple2<String, String>) w.key;
        int i = w.find(p.windowStart);
        if (i < 0) {
            i = w.add(p.windowStart);
            index(p.windowStart, indexKey);
        }
        w.sums[i].merge(p.totals);
        w.pending[i] = true;
        if (lastMillis <= watermark) fire(w, i, key()); // its window has fired: at once, revision + 1
        state.update(w);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        long wm = mark.getTimestamp();
        if (wm > watermark) {
            watermark = wm;
            // Windows starting at or before lastFiring have their last millisecond at or before the watermark.
            long lastFiring = wm == Long.MAX_VALUE
                    ? Long.MAX_VALUE
                    : wm < Long.MIN_VALUE + windows.sizeMillis() ? Long.MIN_VALUE : wm - windows.sizeMillis() + 1;
            Map<Long, List<Tuple2<String, String>>> due =
                    lastFiring < fireFrom ? Map.of() : keysOf.subMap(fireFrom, true, lastFiring, true);
            for (Map.Entry<Long, List<Tuple2<String, String>>> e : due.entrySet()) {
                for (Tuple2<String, String> key : e.getValue()) {
                    setCurrentKey(key);
                    KeyWindows w = state.value();
                    int i = w.find(e.getKey());
                    if (w.pending[i]) {
                        fire(w, i, key);
                        state.update(w);
                    }
                }
            }
            if (lastFiring != Long.MAX_VALUE && lastFiring >= fireFrom) fireFrom = lastFiring + 1;
            forgetUpTo(wm);
        }
        super.processWatermark(mark);
    }

    /** Forgets the windows whose last millisecond + allowed lateness the watermark has reached. */
    private void forgetUpTo(long wm) throws Exception {
        for (Iterator<Map.Entry<Long, List<Tuple2<String, String>>>> it =
                        keysOf.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<Long, List<Tuple2<String, String>>> e = it.next();
            long start = e.getKey();
            if (start + windows.sizeMillis() - 1 + allowedLatenessMillis > wm) break;
            for (Tuple2<String, String> key : e.getValue()) {
                setCurrentKey(key);
                KeyWindows w = state.value();
                w.remove(w.find(start));
                if (w.size == 0) {
                    state.clear();
                } else {
                    state.update(w);
                }
            }
            it.remove();
        }
    }

    private void fire(KeyWindows w, int i, Tuple2<String, String> key) {
        int revision = ++w.revisions[i];
        w.pending[i] = false;
        firings.inc();
        firingsTotal.add(1L);
        if (revision > 1) {
            lateRefirings.inc();
            lateRefiringsTotal.add(1L);
        }
        long start = w.starts[i];
        long end = start + windows.sizeMillis();
        maxWindowEnd.add(end);
        output.collect(new StreamRecord<>(
                new StreamWindowMetricsTable.Row(
                        new WindowRow(new WindowKey(start, key.f0, key.f1), end, w.sums[i].toMetrics()), revision),
                end - 1));
    }

    private void index(long windowStart, Tuple2<String, String> key) {
        keysOf.computeIfAbsent(windowStart, s -> new ArrayList<>()).add(key);
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
