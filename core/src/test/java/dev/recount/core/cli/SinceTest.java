package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.LocalDate;
import org.junit.jupiter.api.Test;

class SinceTest {
    private static final LocalDate TODAY = LocalDate.of(2026, 11, 29);

    @Test
    void aDateIsThatDay() {
        assertThat(Since.parse("2026-11-20").first(TODAY)).isEqualTo(LocalDate.of(2026, 11, 20));
    }

    @Test
    void daysBackMoveWithToday() {
        assertThat(Since.parse("7d").first(TODAY)).isEqualTo(LocalDate.of(2026, 11, 22));
        assertThat(Since.parse("P7D")).isEqualTo(Since.daysBack(7));
        assertThat(Since.parse("168h")).isEqualTo(Since.daysBack(7));
        assertThat(Since.parse("7d").first(TODAY.plusDays(1))).isEqualTo(LocalDate.of(2026, 11, 23));
    }

    @Test
    void anythingElseIsRefusedNamingBothForms() {
        assertThatThrownBy(() -> Since.parse("36h")).hasMessageContaining("not a whole number of days back");
        assertThatThrownBy(() -> Since.parse("0d")).hasMessageContaining("not a whole number of days back");
        assertThatThrownBy(() -> Since.parse("last week"))
                .hasMessageContaining("as a date (2026-11-20) or a number of days back (7d)");
        assertThatThrownBy(() -> Since.parse("2026-13-01")).isInstanceOf(IllegalArgumentException.class);
    }
}
