package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.TestSets;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class NightlyRangeTest {
    private static final WindowAlignment MINUTE = new WindowAlignment(60_000);
    private static final WindowAlignment HOUR = new WindowAlignment(3_600_000);
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    /**
     * With several sets, both bounds round up to the next instant that starts a window of each: the next multiple of
     * the least common multiple of their windows (+05:45: midnight is 18:15 UTC, a start of 1- and 5-minute windows,
     * not of hourly ones or of 2- and 3-minute ones together).
     */
    @Test
    void withSeveralSetsTheDayStartsWhereAWindowOfEverySetStarts() {
        ZoneId kathmandu = ZoneId.of("Asia/Kathmandu");
        LocalDate day = LocalDate.parse("2026-11-28");
        assertThat(NightlyRange.forDate(day, kathmandu, TestSets.parse(TestSets.THREE_SETS)))
                .isEqualTo(range("2026-11-27T18:15:00Z", "2026-11-28T18:15:00Z"));
        assertThat(NightlyRange.forDate(day, kathmandu, sets("1m", "1h")))
                .isEqualTo(range("2026-11-27T19:00:00Z", "2026-11-28T19:00:00Z"));
        assertThat(NightlyRange.forDate(day, kathmandu, sets("2m", "3m")))
                .isEqualTo(range("2026-11-27T18:18:00Z", "2026-11-28T18:18:00Z"));
    }

    private static MetricSets sets(String first, String second) {
        return TestSets.parse("""
                version: 1
                sets:
                  - name: one
                    dimensions: [campaign_id]
                    measures: [{name: clicks, kind: count, where: {event_type: click}}]
                    window: %s
                  - name: two
                    dimensions: [channel_id]
                    measures: [{name: clicks, kind: count, where: {event_type: click}}]
                    window: %s
                """.formatted(first, second));
    }

    @Test
    void aUtcDayIsMidnightToMidnight() {
        TimeRange r = NightlyRange.forDate(LocalDate.parse("2026-11-28"), ZoneOffset.UTC, MINUTE);
        assertThat(r).isEqualTo(range("2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z"));
    }

    @Test
    void theDayDaylightSavingTimeStartsHas23Hours() {
        TimeRange r = NightlyRange.forDate(LocalDate.parse("2026-03-29"), BERLIN, MINUTE);
        assertThat(r).isEqualTo(range("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"));
        assertThat(Duration.ofMillis(r.toMillis() - r.fromMillis())).isEqualTo(Duration.ofHours(23));
    }

    @Test
    void theDayDaylightSavingTimeEndsHas25Hours() {
        TimeRange r = NightlyRange.forDate(LocalDate.parse("2026-10-25"), BERLIN, MINUTE);
        assertThat(r).isEqualTo(range("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"));
        assertThat(Duration.ofMillis(r.toMillis() - r.fromMillis())).isEqualTo(Duration.ofHours(25));
    }

    @Test
    void aWindowStraddlingMidnightBelongsToTheDayItStartsIn() {
        // Kathmandu is UTC+05:45: local midnight of 2026-11-28 is 2026-11-27T18:15Z, inside the hourly window
        // [18:00Z, 19:00Z) that starts at 23:45 local on the 27th, so that window is the 27th's.
        ZoneId kathmandu = ZoneId.of("Asia/Kathmandu");
        TimeRange r = NightlyRange.forDate(LocalDate.parse("2026-11-28"), kathmandu, HOUR);
        assertThat(r).isEqualTo(range("2026-11-27T19:00:00Z", "2026-11-28T19:00:00Z"));
        assertThat(NightlyRange.forDate(LocalDate.parse("2026-11-27"), kathmandu, HOUR)
                        .toMillis())
                .isEqualTo(r.fromMillis());
    }

    @Test
    void consecutiveDaysTileTheTimeLineAcrossBothSwitches() {
        LocalDate d = LocalDate.parse("2026-03-01");
        for (int i = 0; i < 300; i++, d = d.plusDays(1)) {
            assertThat(NightlyRange.forDate(d, BERLIN, MINUTE).toMillis())
                    .as("end of %s", d)
                    .isEqualTo(
                            NightlyRange.forDate(d.plusDays(1), BERLIN, MINUTE).fromMillis());
        }
    }

    @Test
    void thePreviousDayIsYesterdayInTheConfiguredZone() {
        Clock justAfterUtcMidnight = Clock.fixed(Instant.parse("2026-11-29T00:30:00Z"), ZoneOffset.UTC);
        assertThat(NightlyRange.previousDay(justAfterUtcMidnight, ZoneOffset.UTC))
                .isEqualTo("2026-11-28");
        // Still the afternoon of the 28th in Los Angeles.
        assertThat(NightlyRange.previousDay(justAfterUtcMidnight, ZoneId.of("America/Los_Angeles")))
                .isEqualTo("2026-11-27");
    }

    private static TimeRange range(String from, String to) {
        return TimeRange.of(Instant.parse(from), Instant.parse(to));
    }
}
