package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.InvalidReason;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.source.DeadLetter;
import dev.recount.stream.source.ParsedRecord;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Splits validated records: valid events go on, invalid ones to the {@link #DEAD_LETTERS} side output. Counts both,
 * invalid ones by reason ({@code reason} is a metric variable, so Prometheus gets one series per reason), as
 * metrics and as job totals ({@link JobTotals}).
 */
public final class RouteInvalidRecords extends ProcessFunction<ParsedRecord, AdEvent> {
    private static final long serialVersionUID = 1L;

    public static final OutputTag<DeadLetter> DEAD_LETTERS =
            new OutputTag<>("dead-letters", TypeInformation.of(DeadLetter.class));
    public static final String VALID_EVENTS_METRIC = JobTotals.VALID_EVENTS;
    public static final String INVALID_EVENTS_METRIC = JobTotals.INVALID_EVENTS;

    private transient Counter validEvents;
    private transient Map<InvalidReason, Counter> invalidEvents;
    private transient LongCounter validTotal;
    private transient Map<InvalidReason, LongCounter> invalidTotals;

    @Override
    public void open(OpenContext openContext) {
        MetricGroup group = getRuntimeContext().getMetricGroup();
        validEvents = group.counter(VALID_EVENTS_METRIC);
        invalidEvents = new EnumMap<>(InvalidReason.class);
        validTotal = JobTotals.counter(getRuntimeContext(), VALID_EVENTS_METRIC);
        invalidTotals = new EnumMap<>(InvalidReason.class);
        for (InvalidReason reason : InvalidReason.values()) {
            invalidEvents.put(
                    reason, group.addGroup("reason", reason.wireName()).counter(INVALID_EVENTS_METRIC));
            invalidTotals.put(reason, JobTotals.counter(getRuntimeContext(), JobTotals.invalid(reason)));
        }
    }

    @Override
    public void processElement(ParsedRecord record, Context ctx, Collector<AdEvent> out) {
        if (record.isValid()) {
            validEvents.inc();
            validTotal.add(1L);
            out.collect(record.event);
        } else {
            invalidEvents.get(record.deadLetter.reason).inc();
            invalidTotals.get(record.deadLetter.reason).add(1L);
            ctx.output(DEAD_LETTERS, record.deadLetter);
        }
    }
}
