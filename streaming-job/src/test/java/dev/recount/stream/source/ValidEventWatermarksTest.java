package dev.recount.stream.source;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.InvalidReason;
import dev.recount.stream.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
import org.apache.flink.util.clock.ManualClock;
import org.junit.jupiter.api.Test;

/**
 * Per-partition watermarks, combined the way Flink's source combines its partitions (a
 * {@link WatermarkOutputMultiplexer}: the minimum over partitions that are not idle).
 */
class ValidEventWatermarksTest {
    private static final Duration OUT_OF_ORDERNESS = Duration.ofSeconds(5);
    private static final Duration IDLENESS = Duration.ofSeconds(60);

    private static final Duration MAX_FUTURE = Duration.ofMinutes(5);
    private static final Duration LATE_ON_ARRIVAL = Fixtures.SETTINGS.lateOnArrival();
    private final ManualClock clock = new ManualClock();
    /** The wall clock the cap is judged by: well after the fixtures' event times unless a test moves it. */
    private long wallClock = ms(W0.plusSeconds(86_400));

    private final java.util.concurrent.atomic.AtomicLong eventsAhead = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicInteger idlePartitions = new AtomicInteger();
    private final RecordingOutput combined = new RecordingOutput();
    private final WatermarkOutputMultiplexer multiplexer = new WatermarkOutputMultiplexer(combined);
    private final ValidEventWatermarks busy = partition("p0");
    private final ValidEventWatermarks quiet = partition("p1");

    @Test
    void watermarkIsMaxValidEventTimeMinusOutOfOrderness() {
        event(busy, "p0", click("a", W0.plusSeconds(30), 1));
        event(busy, "p0", click("b", W0.plusSeconds(20), 2)); // out of order: does not move it back
        event(quiet, "p1", click("c", W0.plusSeconds(40), 1));
        emitPeriodic();

        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(25)) - 1);
    }

    @Test
    void invalidRecordsNeitherMoveTheWatermarkNorKeepAPartitionActive() {
        // A record far in the future but invalid: ignored entirely.
        quietGoesIdleReceivingOnly(i -> invalid(quiet, "p1", ms(W0.plusSeconds(3600))));
    }

    /**
     * p0 keeps moving while p1 receives only what {@code toQuiet} sends it (round 0, 1, 2): p1 must go idle, leaving
     * p0 to decide the watermark alone.
     */
    private void quietGoesIdleReceivingOnly(java.util.function.IntConsumer toQuiet) {
        event(busy, "p0", click("a", W0.plusSeconds(30), 1));
        event(quiet, "p1", click("b", W0.plusSeconds(10), 1));
        emitPeriodic();
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(5)) - 1);

        // Idleness is measured from the first periodic check without activity.
        for (int i = 0; i < 3; i++) {
            clock.advanceTime(Duration.ofSeconds(40));
            event(busy, "p0", click("a" + i, W0.plusSeconds(60 + i), 2 + i));
            toQuiet.accept(i);
            emitPeriodic();
        }

        assertThat(idlePartitions).as("p1 idle").hasValue(1);
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(62 - 5)) - 1);
    }

    @Test
    void anIdlePartitionDoesNotHoldBackTheWatermark() {
        event(busy, "p0", click("a", W0.plusSeconds(10), 1));
        event(quiet, "p1", click("b", W0.plusSeconds(10), 1));
        emitPeriodic();
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(5)) - 1);

        // p1 goes quiet; p0 moves on. Within the idleness timeout p1 still holds the watermark.
        clock.advanceTime(Duration.ofSeconds(30));
        event(busy, "p0", click("c", W0.plusSeconds(120), 2));
        emitPeriodic();
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(5)) - 1);
        assertThat(idlePartitions).hasValue(0);

        clock.advanceTime(IDLENESS.plusSeconds(1));
        event(busy, "p0", click("d", W0.plusSeconds(121), 3));
        emitPeriodic();
        emitPeriodic();

        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(116)) - 1);
        assertThat(idlePartitions).hasValue(1);

        // When p1 speaks again it counts again (and is no longer idle).
        event(quiet, "p1", click("e", W0.plusSeconds(200), 2));
        emitPeriodic();
        assertThat(idlePartitions).hasValue(0);
    }

    @Test
    void watermarkFollowsEventTimeWithoutWaitingForThePeriodicEmit() {
        // No periodic emit at all: as in a replay that reads minutes of event time within one emit interval.
        eventNow(busy, "p0", click("a", W0.plusSeconds(30), 1));
        eventNow(quiet, "p1", click("b", W0.plusSeconds(40), 1));
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(25)) - 1);

        eventNow(busy, "p0", click("c", W0.plusSeconds(30).plusMillis(500), 2)); // less than a step: no emit
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(25)) - 1);

        eventNow(busy, "p0", click("d", W0.plusSeconds(240), 3));
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(35)) - 1); // now held by p1 at 40 s - 5 s
    }

    /**
     * A producer whose clock runs 50 minutes ahead sends valid events 50 minutes in the future (validation judges
     * them against its own record timestamp). They may move the watermark only to the wall clock, so the honest
     * events after them are not too late; and only those beyond max-future count as a clock running ahead.
     */
    @Test
    void anEventFromTheFutureMovesTheWatermarkOnlyToTheWallClock() {
        wallClock = ms(W0.plusSeconds(60));
        eventNow(busy, "p0", click("honest-1", W0.plusSeconds(55), 1));
        eventNow(quiet, "p1", click("honest-2", W0.plusSeconds(55), 1));
        eventNow(busy, "p0", click("skewed", W0.plusSeconds(60 + 50 * 60), 2));

        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(50)) - 1); // still held by p1
        eventNow(quiet, "p1", click("honest-3", W0.plusSeconds(59), 2));
        // p0's watermark: wall clock - out-of-orderness, not 50 min ahead.
        busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        quiet.onPeriodicEmit(multiplexer.getImmediateOutput("p1"));
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(54)) - 1);
        eventNow(quiet, "p1", click("far", W0.plusSeconds(3600), 3));
        assertThat(combined.last())
                .as("the minimum over partitions, each capped at the clock")
                .isEqualTo(ms(W0.plusSeconds(60 - 5)) - 1);
        assertThat(eventsAhead).hasValue(2);
    }

    /**
     * A device clock a few minutes fast, with an honest record timestamp: valid (within max-future of it), and on
     * every partition. With the cap at clock + max-future it put the watermark minutes ahead and every honest event
     * after it was too late; at the clock, honest events keep the windows they arrive for.
     */
    @Test
    void aDeviceClockMinutesAheadOnEveryPartitionLeavesHonestEventsOnTime() {
        wallClock = ms(W0.plusSeconds(30));
        Instant fast = W0.plusSeconds(30).plus(Duration.ofSeconds(210)); // 3.5 minutes ahead
        eventNow(busy, "p0", click("fast-0", fast, 1));
        eventNow(quiet, "p1", click("fast-1", fast, 1));
        busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        quiet.onPeriodicEmit(multiplexer.getImmediateOutput("p1"));

        wallClock = ms(W0.plusSeconds(31));
        AdEvent honest = click("honest", W0.plusSeconds(30), 2);
        assertThat(combined.last())
                .as("behind the honest event's window, so it is on time")
                .isLessThan(Fixtures.SETTINGS.windows().windowEnd(honest.eventTs) - 1);
        assertThat(eventsAhead).as("within max-future: no clock alert").hasValue(0);
    }

    /**
     * A partition that receives only events far behind their own record timestamps (valid within max-past: a week)
     * goes idle like a quiet one instead of holding the job's watermark a week back for as long as they keep coming.
     * Events just within the bound still count.
     */
    @Test
    void eventsLateOnArrivalNeitherMoveEventTimeNorKeepAPartitionActive() {
        quietGoesIdleReceivingOnly(i -> {
            Instant sent = W0.plusSeconds(60 + i);
            AdEvent old = click("old" + i, sent.minus(Duration.ofDays(6)), 2 + i);
            old.recordTs = ms(sent);
            event(quiet, "p1", old);
        });

        // An event exactly at the bound behind its record timestamp is not late on arrival: p1 counts again.
        Instant sent = W0.plusSeconds(300);
        AdEvent atTheBound = click("at-bound", sent.minus(LATE_ON_ARRIVAL), 9);
        atTheBound.recordTs = ms(sent);
        event(quiet, "p1", atTheBound);
        emitPeriodic();
        assertThat(idlePartitions).hasValue(0);
    }

    /**
     * Event time held back by the clock is released as the clock moves, even with nothing more arriving, and the
     * partition does not go idle while it still holds some: the event's window closes when real time gets there.
     */
    @Test
    void eventTimeAheadOfTheClockIsReleasedAsTheClockMoves() {
        multiplexer.unregisterOutput("p1"); // only p0 decides
        wallClock = ms(W0.plusSeconds(60));
        eventNow(busy, "p0", click("ahead", W0.plusSeconds(60 + 120), 1));
        busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(60 - 5)) - 1);

        // Longer than the idleness without any event, the clock still behind the event: released, not idle.
        clock.advanceTime(IDLENESS.multipliedBy(3));
        wallClock = ms(W0.plusSeconds(60 + 90));
        busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(150 - 5)) - 1);
        assertThat(idlePartitions).hasValue(0);

        // Once the clock has passed it, all of it counts, and the partition may go idle again.
        wallClock = ms(W0.plusSeconds(60 + 300));
        for (int i = 0; i < 3; i++) {
            clock.advanceTime(IDLENESS.plusSeconds(1));
            busy.onPeriodicEmit(multiplexer.getImmediateOutput("p0"));
        }
        assertThat(combined.last()).isEqualTo(ms(W0.plusSeconds(180 - 5)) - 1);
        assertThat(idlePartitions).hasValue(1);
    }

    /** A partition that never had any but late-on-arrival events is counted among the idle ones once idle. */
    @Test
    void aPartitionOfOnlyLateOnArrivalEventsCountsAsIdle() {
        Instant sent = W0.plusSeconds(60);
        AdEvent old = click("old", sent.minus(Duration.ofDays(6)), 1);
        old.recordTs = ms(sent);
        for (int i = 0; i < 3; i++) {
            clock.advanceTime(IDLENESS);
            event(quiet, "p1", old);
            quiet.onPeriodicEmit(multiplexer.getDeferredOutput("p1"));
        }
        assertThat(idlePartitions).hasValue(1);
    }

    private void eventNow(ValidEventWatermarks generator, String id, AdEvent e) {
        generator.onEvent(ParsedRecord.valid(e), e.eventTs, multiplexer.getImmediateOutput(id));
    }

    private ValidEventWatermarks partition(String id) {
        multiplexer.registerNewOutput(id);
        return new ValidEventWatermarks(
                OUT_OF_ORDERNESS,
                IDLENESS,
                MAX_FUTURE,
                LATE_ON_ARRIVAL,
                clock,
                () -> wallClock,
                idlePartitions,
                eventsAhead);
    }

    private void event(ValidEventWatermarks generator, String id, AdEvent e) {
        generator.onEvent(ParsedRecord.valid(e), e.eventTs, multiplexer.getDeferredOutput(id));
    }

    private void invalid(ValidEventWatermarks generator, String id, long kafkaTimestamp) {
        generator.onEvent(
                ParsedRecord.invalid(new DeadLetter(InvalidReason.SCHEMA, "{}", null)),
                kafkaTimestamp,
                multiplexer.getDeferredOutput(id));
    }

    private void emitPeriodic() {
        busy.onPeriodicEmit(multiplexer.getDeferredOutput("p0"));
        quiet.onPeriodicEmit(multiplexer.getDeferredOutput("p1"));
        multiplexer.onPeriodicEmit();
    }

    private static final class RecordingOutput implements WatermarkOutput {
        private final List<Long> watermarks = new ArrayList<>();

        @Override
        public void emitWatermark(Watermark watermark) {
            watermarks.add(watermark.getTimestamp());
        }

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}

        long last() {
            return watermarks.isEmpty() ? Long.MIN_VALUE : watermarks.get(watermarks.size() - 1);
        }
    }
}
