package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.Progress;
import dev.recount.core.time.ProcessClock;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** reconcile's progress is recount's one display: its steps and rows, as lines for a log (on a test clock). */
class RunProgressTest {
    private final ProcessClock.Manual clock = ProcessClock.manual();
    private final StringWriter out = new StringWriter();
    private final RunProgress progress =
            RunProgress.of(Progress.lines("recount reconcile", new PrintWriter(out), Duration.ofSeconds(5), clock));

    @Test
    void aRunShorterThanTheIntervalPrintsNothing() {
        progress.stage("checking that succeeded batch runs cover the range");
        clock.advance(Duration.ofSeconds(2));
        progress.stage("writing the report");
        for (int i = 1; i <= 1_000; i++) progress.rows(i, 1_000);
        progress.close();
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void aLongRunPrintsItsStepAndRowsAtMostOnceAnInterval() {
        progress.stage("comparing stream and batch, correcting window_metrics");
        clock.advance(Duration.ofSeconds(6));
        progress.stage("writing the report");
        for (int i = 1; i <= 20_158; i++) {
            progress.rows(i, 20_158);
            if (i % 1_000 == 0) clock.advance(Duration.ofSeconds(1));
        }
        progress.close();
        java.util.List<String> lines = out.toString().lines().toList();
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).isEqualTo("recount reconcile: writing the report (6 s)");
        assertThat(lines.get(1)).startsWith("recount reconcile: writing the report, 5,001 of 20,158 rows (24 %), ");
        assertThat(lines.get(4)).startsWith("recount reconcile: writing the report, 20,001 of 20,158 rows (99 %), ");
    }
}
