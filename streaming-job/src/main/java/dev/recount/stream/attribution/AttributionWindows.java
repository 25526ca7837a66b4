package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionAccumulator;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import java.time.Duration;
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
 * Sums {@link AttributionDelta}s per window key (window of the click, campaign, channel) with the window metrics'
 * firing rules: the first firing when the watermark reaches the window's last millisecond (revision 1), then one
 * more per change within the allowed lateness (revision + 1, at once), and the key is forgotten when the watermark
 * passes its last millisecond + allowed lateness. A delta after that cannot come from the join (it holds nothing
 * that late); should one arrive, it is counted ({@value #TOO_LATE_METRIC}) and dropped — the batch layer and the
 * reconciler correct the window.
 */
public final class AttributionWindows
        extends KeyedProcessFunction<
                Tuple3<Long, String, String>, AttributionDelta, StreamAttributionMetricsTable.Row> {
    private static final long serialVersionUID = 1L;
    public static final String TOO_LATE_METRIC = "attributionDeltasTooLate";
    public static final TypeInformation<Tuple3<Long, String, String>> KEY_TYPE =
            Types.TUPLE(Types.LONG, Types.STRING, Types.STRING);

    private final WindowAlignment windows;
    private final long allowedLatenessMillis;

    private transient ValueState<AttributionAccumulator> sums;
    /** The last revision fired; absent: not fired yet. */
    private transient ValueState<Integer> revision;

    private transient Counter tooLate;

    public AttributionWindows(WindowAlignment windows, Duration allowedLateness) {
        this.windows = windows;
        this.allowedLatenessMillis = allowedLateness.toMillis();
    }

    /** The key this function must be keyed by. */
    public static final class Key implements KeySelector<AttributionDelta, Tuple3<Long, String, String>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple3<Long, String, String> getKey(AttributionDelta d) {
            return Tuple3.of(d.windowStart, d.campaignId, d.channelId);
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
    public void processElement(AttributionDelta d, Context ctx, Collector<StreamAttributionMetricsTable.Row> out)
            throws Exception {
        long last = d.windowStart + windows.sizeMillis() - 1;
        long watermark = ctx.timerService().currentWatermark();
        if (last + allowedLatenessMillis <= watermark) {
            tooLate.inc();
            return;
        }
        AttributionAccumulator acc = sums.value();
        if (acc == null) {
            acc = new AttributionAccumulator();
            ctx.timerService().registerEventTimeTimer(last);
            ctx.timerService().registerEventTimeTimer(last + allowedLatenessMillis);
        }
        acc.merge(d.change);
        sums.update(acc);
        if (revision.value() != null) fire(d.windowStart, d.campaignId, d.channelId, acc, out); // fired already
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<StreamAttributionMetricsTable.Row> out)
            throws Exception {
        Tuple3<Long, String, String> key = ctx.getCurrentKey();
        long last = key.f0 + windows.sizeMillis() - 1;
        if (timestamp == last && revision.value() == null) {
            AttributionAccumulator acc = sums.value();
            if (acc != null) fire(key.f0, key.f1, key.f2, acc, out);
        }
        if (timestamp == last + allowedLatenessMillis) {
            sums.clear();
            revision.clear();
        }
    }

    private void fire(
            long windowStart,
            String campaign,
            String channel,
            AttributionAccumulator acc,
            Collector<StreamAttributionMetricsTable.Row> out)
            throws Exception {
        Integer previous = revision.value();
        int next = previous == null ? 1 : previous + 1;
        revision.update(next);
        out.collect(new StreamAttributionMetricsTable.Row(
                new AttributionRow(
                        new WindowKey(windowStart, campaign, channel),
                        windowStart + windows.sizeMillis(),
                        acc.toMetrics()),
                next));
    }
}
