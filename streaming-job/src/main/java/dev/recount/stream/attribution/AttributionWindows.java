package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionAccumulator;
import dev.recount.core.window.EventTime;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sets.SetRules;
import dev.recount.stream.sink.SetAttributionRow;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Sums {@link AttributionDelta}s per window key of a metric set (the set's window of the click and its dimension
 * values) with the window metrics' firing rules, core's {@link EventTime} of the set: the first firing when the
 * watermark reaches the window's last millisecond (revision 1), then one more per change within the allowed lateness
 * (revision + 1, at once), and the key is forgotten when the window is closed. A delta after that cannot come from the
 * join (it holds nothing that late); should one arrive, it is counted ({@value #TOO_LATE_METRIC}) and dropped — the
 * batch layer and the reconciler correct the window.
 *
 * <p>Keyed by {@link SetKeys#ATTRIBUTION_KEY} (window start and the set's key parts), so the default set's keys, state
 * and timers are the release before metric sets' own. State of a set no longer defined is dropped by its timers.
 */
public final class AttributionWindows
        extends KeyedProcessFunction<Tuple3<Long, String, String>, AttributionDelta, SetAttributionRow> {
    private static final long serialVersionUID = 2L;
    public static final String TOO_LATE_METRIC = "attributionDeltasTooLate";

    private final JobSets sets;

    private transient ValueState<AttributionAccumulator> sums;
    /** The last revision fired; absent: not fired yet. */
    private transient ValueState<Integer> revision;

    private transient Counter tooLate;

    public AttributionWindows(JobSets sets) {
        this.sets = sets;
    }

    /** The key this function must be keyed by. */
    public static KeySelector<AttributionDelta, Tuple3<Long, String, String>> keySelector(JobSets sets) {
        return new DeltaKey(sets);
    }

    private static final class DeltaKey implements KeySelector<AttributionDelta, Tuple3<Long, String, String>> {
        private static final long serialVersionUID = 1L;
        private final JobSets sets;

        DeltaKey(JobSets sets) {
            this.sets = sets;
        }

        @Override
        public Tuple3<Long, String, String> getKey(AttributionDelta d) {
            return SetKeys.attributionKey(sets.byName(d.set), d.windowStart, d.dimensions);
        }
    }

    @Override
    public void open(OpenContext context) {
        sums = getRuntimeContext()
                .getState(new ValueStateDescriptor<>(
                        "attribution-sums", TypeInformation.of(AttributionAccumulator.class)));
        revision = getRuntimeContext().getState(new ValueStateDescriptor<>("attribution-revision", Types.INT));
        tooLate = getRuntimeContext().getMetricGroup().counter(TOO_LATE_METRIC);
    }

    @Override
    public void processElement(AttributionDelta d, Context ctx, Collector<SetAttributionRow> out) throws Exception {
        SetRules set = sets.byName(d.set);
        EventTime time = set.time();
        if (time.isClosed(d.windowStart, ctx.timerService().currentWatermark())) {
            tooLate.inc();
            return;
        }
        AttributionAccumulator acc = sums.value();
        if (acc == null) {
            acc = new AttributionAccumulator();
            ctx.timerService().registerEventTimeTimer(time.lastMillis(d.windowStart));
            ctx.timerService().registerEventTimeTimer(time.closesAt(d.windowStart));
        }
        acc.merge(d.change);
        sums.update(acc);
        if (revision.value() != null) fire(set, ctx.getCurrentKey(), acc, out); // fired already
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<SetAttributionRow> out) throws Exception {
        Tuple3<Long, String, String> key = ctx.getCurrentKey();
        SetRules set = sets.ofKeyPart(key.f1);
        if (set == null) { // a set removed from the definitions: its restored windows are dropped
            sums.clear();
            revision.clear();
            return;
        }
        EventTime time = set.time();
        if (timestamp == time.lastMillis(key.f0) && revision.value() == null) {
            AttributionAccumulator acc = sums.value();
            if (acc != null) fire(set, key, acc, out);
        }
        if (timestamp == time.closesAt(key.f0)) {
            sums.clear();
            revision.clear();
        }
    }

    private void fire(
            SetRules set,
            Tuple3<Long, String, String> key,
            AttributionAccumulator acc,
            Collector<SetAttributionRow> out)
            throws Exception {
        Integer previous = revision.value();
        int next = previous == null ? 1 : previous + 1;
        revision.update(next);
        long windowStart = key.f0;
        out.collect(new SetAttributionRow(
                set.name(),
                new StreamAttributionMetricsTable.Row(
                        new AttributionRow(
                                WindowKey.of(windowStart, SetKeys.dimensions(set, key.f1, key.f2)),
                                set.windowEnd(windowStart),
                                acc.toMetrics()),
                        next)));
    }
}
