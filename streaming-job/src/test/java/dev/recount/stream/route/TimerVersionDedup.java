package dev.recount.stream.route;

import dev.recount.core.event.AdEvent;
import dev.recount.stream.window.SetPartial;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The keyed state the de-dup wrote before it forgot ids by sweeping: the same bucket tables under the same state
 * name, and an event-time timer per bucket and due time in the "dedup-cleanup" timer service (namespace and time
 * both the due time). Only remembers; it exists to write a checkpoint of that layout for today's operator to restore.
 */
final class TimerVersionDedup extends AbstractStreamOperator<SetPartial>
        implements OneInputStreamOperator<AdEvent, SetPartial>, Triggerable<Integer, Long> {
    private static final long serialVersionUID = 1L;

    /** Computes due times exactly as the operator that restores the checkpoint does. */
    private final DedupAndRouteTooLate dueTimes;

    private transient ValueState<SeenIds> seen;
    private transient InternalTimerService<Long> cleanup;
    private transient IdDigest digest;

    TimerVersionDedup(DedupAndRouteTooLate dueTimes) {
        this.dueTimes = dueTimes;
    }

    @Override
    public void open() throws Exception {
        super.open();
        seen = getPartitionedState(
                new ValueStateDescriptor<>(DedupAndRouteTooLate.SEEN_IDS_STATE, SeenIds.Serializer.INSTANCE));
        cleanup = getInternalTimerService("dedup-cleanup", LongSerializer.INSTANCE, this);
        digest = new IdDigest();
    }

    @Override
    public void processElement(StreamRecord<AdEvent> record) throws Exception {
        AdEvent event = record.getValue();
        long forgetAt = dueTimes.forgetAt(dueTimes.rememberedFrom(event, cleanup.currentWatermark()));
        SeenIds ids = seen.value();
        if (ids == null) ids = new SeenIds();
        int added = ids.add(digest.of(event.eventId), forgetAt);
        seen.update(ids);
        if (added == SeenIds.ADDED_NEW_DUE_TIME) cleanup.registerEventTimeTimer(forgetAt, forgetAt);
    }

    @Override
    public void onEventTime(InternalTimer<Integer, Long> timer) {
        throw new AssertionError("only snapshotted, never advanced");
    }

    @Override
    public void onProcessingTime(InternalTimer<Integer, Long> timer) {
        throw new AssertionError("no processing-time timers");
    }
}
