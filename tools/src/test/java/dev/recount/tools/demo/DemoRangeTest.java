package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The demo reconciles whole windows of its longest set: a backfill or reconciliation range must hold them. */
class DemoRangeTest {
    static final Duration CLOSING = Duration.ofMinutes(4);

    @Test
    void widensTheMainRangeToWholeWindowsOfTheLongestSetAndClosesThem() {
        DemoRun.Range r = DemoRun.range(
                Instant.parse("2026-11-29T10:02:00Z"), Duration.ofMinutes(4), Duration.ofMinutes(5), CLOSING);

        assertThat(r.start()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(r.mainEnd()).isEqualTo(Instant.parse("2026-11-29T10:04:00Z"));
        assertThat(r.end()).isEqualTo(Instant.parse("2026-11-29T10:05:00Z"));
        // Traffic up to the range's end, then long enough for its last windows to close.
        assertThat(r.tail()).isEqualTo(Duration.ofMinutes(1).plus(CLOSING));
    }

    @Test
    void anAlignedRangeStaysAsItIs() {
        DemoRun.Range r = DemoRun.range(
                Instant.parse("2026-11-29T10:00:00Z"), Duration.ofMinutes(5), Duration.ofMinutes(5), CLOSING);

        assertThat(r.start()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(r.end()).isEqualTo(r.mainEnd()).isEqualTo(Instant.parse("2026-11-29T10:05:00Z"));
        assertThat(r.tail()).isEqualTo(CLOSING);
    }
}
