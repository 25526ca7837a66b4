package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class WindowCloseCheckpointsTest {
    private static final long MINUTE = 60_000;
    private static final long W1 = 1_795_946_460_000L; // a window end (2026-11-29T10:01:00Z)

    private OptionalLong watermark = OptionalLong.empty();
    private long now = W1 + 35_000;
    private int checkpoints;

    private final WindowCloseCheckpoints.Job job = new WindowCloseCheckpoints.Job() {
        @Override
        public OptionalLong windowWatermark() {
            return watermark;
        }

        @Override
        public void triggerCheckpoint() {
            checkpoints++;
        }
    };
    private final WindowCloseCheckpoints trigger = new WindowCloseCheckpoints(job, List.of(MINUTE), () -> now);

    @Test
    void aCheckpointWhenTheWatermarkPassesAWindowEndOnceEach() {
        trigger.pollOnce(); // no watermark yet
        watermark = OptionalLong.of(W1 - 5_000);
        trigger.pollOnce(); // the first one only sets where it stands
        watermark = OptionalLong.of(W1 - 2);
        trigger.pollOnce();
        assertThat(checkpoints).isZero();

        watermark = OptionalLong.of(W1 - 1); // the window's last millisecond: it fires now
        trigger.pollOnce();
        watermark = OptionalLong.of(W1 + 10_000);
        trigger.pollOnce();
        assertThat(checkpoints).isEqualTo(1);

        watermark = OptionalLong.of(W1 + 3 * MINUTE); // several ends at once: one checkpoint
        now = W1 + 3 * MINUTE + 35_000;
        trigger.pollOnce();
        assertThat(checkpoints).isEqualTo(2);
        assertThat(trigger.triggered()).isEqualTo(2);
    }

    @Test
    void noneForAJobBehindRealTimeNorAtTheEndOfInput() {
        watermark = OptionalLong.of(W1 - 5_000);
        trigger.pollOnce();
        now = W1 + 2 * MINUTE; // a replay or a backlog: more than a window behind the clock
        watermark = OptionalLong.of(W1 + 1);
        trigger.pollOnce();
        watermark = OptionalLong.of(Long.MAX_VALUE);
        trigger.pollOnce();
        assertThat(checkpoints).isZero();
    }

    /** Sets of 3 and 5 min windows: an end of either is a window close; keeping up is judged by the shorter. */
    @Test
    void theWindowEndsOfEverySetCount() {
        WindowCloseCheckpoints twoSizes = new WindowCloseCheckpoints(job, List.of(5 * MINUTE, 3 * MINUTE), () -> now);
        long t0 = 30 * MINUTE; // a multiple of both
        now = t0 + 10_000;
        watermark = OptionalLong.of(t0);
        twoSizes.pollOnce();
        watermark = OptionalLong.of(t0 + 3 * MINUTE - 1); // the 3 min window's last millisecond
        now = t0 + 3 * MINUTE + 5_000;
        twoSizes.pollOnce();
        assertThat(checkpoints).isEqualTo(1);
        watermark = OptionalLong.of(t0 + 5 * MINUTE - 1); // the 5 min window's
        now = t0 + 5 * MINUTE + 5_000;
        twoSizes.pollOnce();
        assertThat(checkpoints).isEqualTo(2);
        watermark = OptionalLong.of(t0 + 5 * MINUTE + 30_000);
        now = t0 + 9 * MINUTE; // more than the shorter window behind
        watermark = OptionalLong.of(t0 + 6 * MINUTE - 1);
        twoSizes.pollOnce();
        assertThat(checkpoints).as("behind real time by more than 3 min").isEqualTo(2);
    }

    @Test
    void aFailingPollIsSkipped() {
        WindowCloseCheckpoints failing = new WindowCloseCheckpoints(
                new WindowCloseCheckpoints.Job() {
                    @Override
                    public OptionalLong windowWatermark() throws Exception {
                        throw new java.io.IOException("REST away");
                    }

                    @Override
                    public void triggerCheckpoint() {
                        checkpoints++;
                    }
                },
                List.of(MINUTE),
                () -> now);
        failing.pollOnce();
        assertThat(checkpoints).isZero();
    }
}
