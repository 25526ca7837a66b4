package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.window.WindowAlignment;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class TimeRangeTest {
    private static final WindowAlignment MINUTE = new WindowAlignment(60_000);
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    @Test
    void rejectsUnalignedBoundsNamingTheNearestAlignedOnes() {
        assertThatThrownBy(() -> new TimeRange(W + 30_000, W + 120_000).requireAligned(MINUTE))
                .hasMessage("--from 2026-11-28T10:00:30Z is not aligned to the 1m window size;"
                        + " use 2026-11-28T10:00:00Z or 2026-11-28T10:01:00Z");
        assertThatThrownBy(() -> new TimeRange(W, W + 60_001).requireAligned(MINUTE))
                .hasMessageStartingWith("--to 2026-11-28T10:01:00.001Z is not aligned");
        assertThat(new TimeRange(W, W + 60_000).requireAligned(MINUTE)).isEqualTo(new TimeRange(W, W + 60_000));
    }

    @Test
    void rejectsEmptyRanges() {
        assertThatThrownBy(() -> new TimeRange(W, W)).hasMessageContaining("must not be empty");
    }

    @Test
    void mergesAdjacentWindowsIntoRanges() {
        List<TimeRange> ranges = TimeRange.ofWindows(List.of(W + 180_000, W, W + 60_000, W + 60_000), MINUTE);
        assertThat(ranges).containsExactly(new TimeRange(W, W + 120_000), new TimeRange(W + 180_000, W + 240_000));
    }
}
