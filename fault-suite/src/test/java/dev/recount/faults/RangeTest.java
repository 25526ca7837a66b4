package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class RangeTest {
    @Test
    void theRangeHoldsWholeWindowsOfEverySet() {
        // The fixture's events lie in [10:00:10, 10:01:20]: 1-minute windows up to 10:02, one 5-minute window.
        Range r = Range.covering(new AccountingFixture().sent.truth());

        assertThat(r.from()).isEqualTo(Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(r.to()).isEqualTo(Instant.parse("2026-12-01T10:05:00Z"));
    }
}
