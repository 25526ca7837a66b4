package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

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
    private final WindowCloseCheckpoints trigger = new WindowCloseCheckpoints(job, MINUTE, () -> now);

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
                MINUTE,
                () -> now);
        failing.pollOnce();
        assertThat(checkpoints).isZero();
    }
}
