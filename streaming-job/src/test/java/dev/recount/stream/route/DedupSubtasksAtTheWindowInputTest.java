package dev.recount.stream.route;

import static dev.recount.stream.Fixtures.SETTINGS;
import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.W1;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.window.EventTime;
import dev.recount.stream.Fixtures;
import dev.recount.stream.window.SetPartial;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.StatusWatermarkValve;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two de-dup subtasks and the window operator's input between them: what each subtask sends goes through Flink's own
 * {@link StatusWatermarkValve} (a channel per subtask), which is how the window operator's watermark is made from
 * theirs. The interleaving is the one a broker restart produced (the fault suite lost 10 events of 4,139 to it): every
 * partition went quiet, so both subtasks went idle; the partitions came back, and one subtask forwarded a watermark
 * minutes ahead while the other was still judging the first records back against its older watermark.
 */
class DedupSubtasksAtTheWindowInputTest {
    private static final long LATENESS = SETTINGS.allowedLateness().toMillis();

    private final List<KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, SetPartial>> subtasks =
            new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (var h : subtasks) h.close();
    }

    @Test
    void whatOneSubtaskFindsOnTimeIsOnTimeAtTheWindowWhileTheOtherRunsAhead() throws Exception {
        var behind = subtask();
        var ahead = subtask();
        WindowInput window = new WindowInput(2);

        // Traffic, then every partition quiet: both subtasks at the same watermark, then idle.
        long before = ms(W0) + 10_000;
        for (var s : subtasks) {
            s.processWatermark(new Watermark(before));
            s.processWatermarkStatus(WatermarkStatus.IDLE);
        }
        window.take(0, behind);
        window.take(1, ahead);

        // The partitions are back. One subtask gets there first: its watermark is far past W0's end and lateness.
        long far = ms(W1) + LATENESS + 60_000;
        ahead.processWatermarkStatus(WatermarkStatus.ACTIVE);
        ahead.processWatermark(new Watermark(far));
        window.take(1, ahead);

        // The other is still at its older watermark: an event of W0 is on time for it.
        AdEvent first = click("first-back", W0.plusSeconds(30), 1);
        behind.processWatermarkStatus(WatermarkStatus.ACTIVE);
        behind.processElement(new StreamRecord<>(first, first.eventTs));
        behind.processWatermark(new Watermark(far));
        window.take(0, behind);

        assertThat(window.partials).as("the event's sum reached the window").hasSize(1);
        assertThat(window.tooLate)
                .as("sums that arrived after the window operator's watermark had passed their window and lateness")
                .isEmpty();
    }

    private KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, SetPartial> subtask() throws Exception {
        var h = new KeyedOneInputStreamOperatorTestHarness<>(
                new DedupAndRouteTooLate(
                        Fixtures.jobSets(Fixtures.DEFAULT_ONLY), SETTINGS.dedupHorizon(), Long.MIN_VALUE, false),
                DedupAndRouteTooLate::idBucket,
                Types.INT);
        h.open();
        subtasks.add(h);
        return h;
    }

    /** The window operator's input: the valve, and what it lets through, judged as the window operator judges. */
    private static final class WindowInput implements PushingAsyncDataInput.DataOutput<Object> {
        private final StatusWatermarkValve valve;
        private final int[] taken;
        final List<SetPartial> partials = new ArrayList<>();
        final List<String> tooLate = new ArrayList<>();
        private long watermark = Long.MIN_VALUE;

        WindowInput(int channels) {
            valve = new StatusWatermarkValve(channels);
            taken = new int[channels];
        }

        /** Passes on what {@code subtask} has sent since the last call, on its channel, in order. */
        void take(int channel, KeyedOneInputStreamOperatorTestHarness<Integer, AdEvent, SetPartial> subtask)
                throws Exception {
            List<Object> sent = new ArrayList<>(subtask.getOutput());
            for (Object element : sent.subList(taken[channel], sent.size())) {
                if (element instanceof Watermark w) valve.inputWatermark(w, channel, this);
                else if (element instanceof WatermarkStatus s) valve.inputWatermarkStatus(s, channel, this);
                else if (element instanceof StreamRecord<?> r) emitRecord(cast(r));
            }
            taken[channel] = sent.size();
        }

        @SuppressWarnings("unchecked")
        private static StreamRecord<Object> cast(StreamRecord<?> r) {
            return (StreamRecord<Object>) r;
        }

        @Override
        public void emitRecord(StreamRecord<Object> record) {
            SetPartial p = (SetPartial) record.getValue();
            partials.add(p);
            // The window operator's test: a window is gone once the watermark passes its last instant + lateness.
            if (new EventTime(SETTINGS.windows(), LATENESS).isTooLate(record.getTimestamp(), watermark)) {
                tooLate.add(p + " at watermark " + watermark);
            }
        }

        @Override
        public void emitWatermark(Watermark mark) {
            watermark = mark.getTimestamp();
        }

        @Override
        public void emitWatermarkStatus(WatermarkStatus status) {}

        @Override
        public void emitLatencyMarker(LatencyMarker latencyMarker) {}

        @Override
        public void emitRecordAttributes(RecordAttributes recordAttributes) {}

        @Override
        public void emitWatermark(WatermarkEvent watermark) {}
    }
}
