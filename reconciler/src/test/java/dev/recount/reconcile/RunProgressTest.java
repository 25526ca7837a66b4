package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import org.junit.jupiter.api.Test;

/** reconcile's progress: plain lines for logs (on a test clock), a bar for terminals, and which one a command gets. */
class RunProgressTest {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final StringWriter out = new StringWriter();
    private final ProgressLines lines = new ProgressLines(new PrintWriter(out), Duration.ofSeconds(5), nanos::get);

    private void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void aRunShorterThanTheIntervalPrintsNothing() {
        lines.stage("checking that succeeded batch runs cover the range");
        advance(Duration.ofSeconds(2));
        lines.stage("comparing stream and batch, correcting window_metrics");
        advance(Duration.ofMillis(2_900));
        lines.stage("writing the report");
        for (int i = 1; i <= 1_000; i++) lines.rows(i, 1_000);
        lines.close();
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void aLongRunPrintsAtMostOneLineEveryIntervalWithItsStepAndRows() {
        lines.stage("comparing stream and batch, correcting window_metrics");
        for (int s = 0; s < 12; s++) {
            advance(Duration.ofSeconds(1));
            lines.tick(); // the heartbeat, once a second
        }
        lines.stage("writing the report");
        for (int i = 1; i <= 20_158; i++) {
            lines.rows(i, 20_158);
            if (i % 1_000 == 0) advance(Duration.ofSeconds(1));
        }
        lines.stage("committing");
        lines.close();
        advance(Duration.ofSeconds(30));
        lines.tick();
        assertThat(out.toString().lines().toList())
                .containsExactly(
                        "reconcile: comparing stream and batch, correcting window_metrics (5 s)",
                        "reconcile: comparing stream and batch, correcting window_metrics (10 s)",
                        "reconcile: writing the report, 3,001 of 20,158 rows (15 s)",
                        "reconcile: writing the report, 8,001 of 20,158 rows (20 s)",
                        "reconcile: writing the report, 13,001 of 20,158 rows (25 s)",
                        "reconcile: writing the report, 18,001 of 20,158 rows (30 s)");
    }

    @Test
    void elapsedReadsAsMinutesAndSeconds() {
        assertThat(RunProgress.elapsed(Duration.ofSeconds(42))).isEqualTo("42 s");
        assertThat(RunProgress.elapsed(Duration.ofSeconds(185))).isEqualTo("3 min 05 s");
    }

    @Test
    void theBarShowsTheStepAndFillsWithTheReportRows() {
        List<String> drawn = new ArrayList<>();
        ProgressBarDisplay bar = new ProgressBarDisplay(new DelegatingProgressBarConsumer(drawn::add, 120));
        bar.stage("comparing stream and batch, correcting window_metrics");
        bar.refresh();
        bar.stage("writing the report");
        bar.rows(500, 1_000);
        bar.refresh();
        bar.close();
        assertThat(drawn).anySatisfy(l -> assertThat(l).startsWith("reconcile").contains("comparing stream and batch"));
        assertThat(drawn)
                .anySatisfy(
                        l -> assertThat(l).contains(" 50%").contains("500/1000").contains("writing the report"));
    }

    @Test
    void aBarOnlyOnATerminalAndNeverWithJson() {
        PrintStream terminal = new PrintStream(new ByteArrayOutputStream());
        PrintWriter err = new PrintWriter(new StringWriter());
        try (RunProgress p = RunProgress.forCommand(true, false, terminal, err)) {
            assertThat(p).isInstanceOf(ProgressBarDisplay.class);
        }
        try (RunProgress p = RunProgress.forCommand(true, true, terminal, err)) {
            assertThat(p).isInstanceOf(ProgressLines.class);
        }
        try (RunProgress p = RunProgress.forCommand(false, false, terminal, err)) {
            assertThat(p).isInstanceOf(ProgressLines.class);
        }
    }
}
