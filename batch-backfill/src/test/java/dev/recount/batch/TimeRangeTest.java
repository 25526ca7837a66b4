package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.batch.testutils.TestSets;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class TimeRangeTest {
    private static final WindowAlignment MINUTE = new WindowAlignment(60_000);
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    private static final MetricSets DEFAULT = MetricSets.defaults();
    private static final MetricSets THREE = TestSets.parse(TestSets.THREE_SETS);

    @Test
    void rejectsUnalignedBoundsNamingTheNearestAlignedOnes() {
        assertThatThrownBy(() -> new TimeRange(W + 30_000, W + 120_000).requireAligned(DEFAULT))
                .hasMessage("--from 2026-11-28T10:00:30Z is not aligned to the 1m window of metric set default;"
                        + " use 2026-11-28T10:00:00Z or 2026-11-28T10:01:00Z");
        assertThatThrownBy(() -> new TimeRange(W, W + 60_001).requireAligned(DEFAULT))
                .hasMessageStartingWith("--to 2026-11-28T10:01:00.001Z is not aligned");
        assertThat(new TimeRange(W, W + 60_000).requireAligned(DEFAULT)).isEqualTo(new TimeRange(W, W + 60_000));
    }

    @Test
    void aRangeMustBeAlignedToTheWindowOfEverySetAndTheMessageNamesTheSet() {
        // Aligned to the 1-minute sets, not to campaign_slot's 5 minutes.
        assertThatThrownBy(() -> new TimeRange(W, W + 2 * 60_000).requireAligned(THREE))
                .hasMessage("--to 2026-11-28T10:02:00Z is not aligned to the 5m window of metric set campaign_slot;"
                        + " use 2026-11-28T10:00:00Z or 2026-11-28T10:05:00Z");
        assertThat(new TimeRange(W, W + 5 * 60_000).requireAligned(THREE)).isEqualTo(new TimeRange(W, W + 300_000));
        assertThat(new TimeRange(W, W + 2 * 60_000).requireAligned(THREE.only("channel_country")))
                .isEqualTo(new TimeRange(W, W + 120_000));
    }

    @Test
    void mergesOverlappingRangesOfSeveralSets() {
        assertThat(TimeRange.merged(List.of(
                        new TimeRange(W + 300_000, W + 360_000),
                        new TimeRange(W, W + 300_000),
                        new TimeRange(W + 60_000, W + 120_000),
                        new TimeRange(W + 600_000, W + 660_000))))
                .containsExactly(new TimeRange(W, W + 360_000), new TimeRange(W + 600_000, W + 660_000));
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
