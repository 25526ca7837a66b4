package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class ScopeDaysTest {
    @Test
    void daysAreTheZonesMidnightsAcrossADstChange() {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        // 2026-10-25 has 25 hours in Berlin (CEST -> CET).
        Scope scope = new Scope(
                Instant.parse("2026-10-24T22:00:00Z").toEpochMilli(),
                Instant.parse("2026-10-26T23:00:00Z").toEpochMilli(),
                null,
                null,
                "two days");
        ScopeDays days = ScopeDays.of(scope, berlin);
        assertThat(days.first()).isEqualTo(LocalDate.of(2026, 10, 25));
        assertThat(days.startsMillis())
                .containsExactly(
                        Instant.parse("2026-10-24T22:00:00Z").toEpochMilli(),
                        Instant.parse("2026-10-25T23:00:00Z").toEpochMilli());
        assertThat(days.day(2)).isEqualTo(LocalDate.of(2026, 10, 26));
    }

    @Test
    void aRangeStartingMidDayStartsAtThatDaysMidnight() {
        Scope scope = new Scope(
                Instant.parse("2026-11-28T10:58:00Z").toEpochMilli(),
                Instant.parse("2026-11-28T11:08:00Z").toEpochMilli(),
                null,
                null,
                "ten minutes");
        ScopeDays days = ScopeDays.of(scope, ZoneId.of("Pacific/Auckland"));
        // 10:58Z is 23:58 on the 28th in Auckland (UTC+13), 11:00Z already the 29th.
        assertThat(days.first()).isEqualTo(LocalDate.of(2026, 11, 28));
        assertThat(days.startsMillis())
                .containsExactly(
                        Instant.parse("2026-11-27T11:00:00Z").toEpochMilli(),
                        Instant.parse("2026-11-28T11:00:00Z").toEpochMilli());
    }
}
