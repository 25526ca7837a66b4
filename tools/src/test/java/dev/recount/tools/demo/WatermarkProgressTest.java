package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WatermarkProgressTest {
    private final WatermarkProgress progress =
            new WatermarkProgress(new PrintWriter(new StringWriter()), Instant.parse("2026-11-29T10:07:00Z"), false);

    @Test
    void aLineSaysWhereTheWatermarkIsAndHowMuchEventTimeIsLeft() {
        assertThat(progress.line(Instant.parse("2026-11-29T10:04:30Z")))
                .isEqualTo("      watermark at 2026-11-29T10:04:30Z, 150s of event time to go");
    }

    @Test
    void atTheTargetItSaysWhatIsStillAwaited() {
        assertThat(progress.line(Instant.parse("2026-11-29T10:07:00Z")))
                .isEqualTo("      watermark at 2026-11-29T10:07:00Z, reached; waiting for the input to be fully read");
    }
}
