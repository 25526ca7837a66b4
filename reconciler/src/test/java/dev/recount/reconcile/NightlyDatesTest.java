package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.time.ZoneId;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NightlyDatesTest {
    static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    static String day(String date, ZoneId zone) {
        LocalDate d = LocalDate.parse(date);
        return ScopeResolver.dayStart(d, zone).toEpochMilli() + "/"
                + ScopeResolver.dayStart(d.plusDays(1), zone).toEpochMilli();
    }

    @Test
    void listsMissingDaysOldestFirst() {
        assertThat(NightlyDates.pending(
                        LocalDate.parse("2026-03-27"),
                        LocalDate.parse("2026-03-31"),
                        BERLIN,
                        Set.of(day("2026-03-28", BERLIN), day("2026-03-30", BERLIN))))
                .extracting(LocalDate::toString)
                .containsExactly("2026-03-27", "2026-03-29", "2026-03-31");
        assertThat(NightlyDates.pending(LocalDate.parse("2026-03-27"), LocalDate.parse("2026-03-26"), BERLIN, Set.of()))
                .isEmpty();
    }

    @Test
    void daysFollowTheZoneIncludingDaylightSavingChanges() {
        Scope shortDay = ScopeResolver.date(LocalDate.parse("2026-03-29"), BERLIN);
        assertThat(shortDay.from().toString()).isEqualTo("2026-03-28T23:00:00Z");
        assertThat(shortDay.toMillis() - shortDay.fromMillis()).isEqualTo(23 * 3_600_000L);
        // A day reconciled in UTC is not the same day in Berlin.
        assertThat(NightlyDates.pending(
                        LocalDate.parse("2026-03-28"),
                        LocalDate.parse("2026-03-28"),
                        BERLIN,
                        Set.of(day("2026-03-28", ZoneId.of("UTC")))))
                .hasSize(1);
    }
}
