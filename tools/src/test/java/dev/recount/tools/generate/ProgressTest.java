package dev.recount.tools.generate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class ProgressTest {
    private final Progress lines = Progress.forCommand(new PrintWriter(new StringWriter()), "generate", 61_800);

    @Test
    void aLineSaysHowFarOfTheExpectedTotalAndAboutHowLongIsLeft() {
        assertThat(lines.line(12_000, 4.0))
                .isEqualTo("generate: 12,000 of about 61,800 records (19 %), 3,000/s, about 17 s left");
    }

    @Test
    void pastTheExpectedTotalItNeitherPassesAHundredPercentNorPromisesTime() {
        assertThat(lines.line(62_000, 20.0)).isEqualTo("generate: 62,000 of about 61,800 records (100 %), 3,100/s");
    }

    @Test
    void withoutATotalOnlyCountAndRate() {
        assertThat(new Progress(new PrintWriter(new StringWriter()), "generate").line(5_000, 2.0))
                .isEqualTo("generate: 5,000 records, 2,500/s");
    }

    @Test
    void theExpectedTotalCountsDuplicatesAndInvalidRecords() {
        TrafficProfile profile = TrafficShape.defaults()
                .profile(
                        dev.recount.core.config.EventTimeSettings.defaults(),
                        java.time.Instant.parse("2026-11-29T10:00:00Z"),
                        java.time.Duration.ofMinutes(5),
                        java.time.Duration.ofMinutes(4),
                        60_000,
                        1,
                        3,
                        java.util.List.of());
        assertThat(Progress.expectedRecords(profile))
                .isEqualTo(Math.round(60_000 * (1 + profile.duplicateShare() + profile.invalidShare())));
    }
}
