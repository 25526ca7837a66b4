package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.time.ProcessClock;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import me.tongfei.progressbar.ProgressBarConsumer;
import org.junit.jupiter.api.Test;

/** The one progress display: lines on a clock the test moves, and the bar into a consumer the test reads. */
class ProgressTest {
    private final StringWriter captured = new StringWriter();
    private final ProcessClock.Manual clock = ProcessClock.manual();
    private final Progress lines =
            Progress.lines("recount reconcile", new PrintWriter(captured), Duration.ofSeconds(5), clock);

    private List<String> printed() {
        return captured.toString().lines().toList();
    }

    @Test
    void aCommandDoneSoonerThanTheIntervalPrintsNothing() {
        lines.step("comparing stream and batch");
        clock.advance(Duration.ofSeconds(4));
        lines.tick();
        lines.close();
        assertThat(captured.toString()).isEmpty();
    }

    @Test
    void atMostOneLineEveryIntervalNamingTheStepAndTheTimeSinceTheStart() {
        lines.step("comparing stream and batch");
        clock.advance(Duration.ofSeconds(5));
        lines.tick();
        clock.advance(Duration.ofSeconds(2));
        lines.tick();
        lines.step("writing the report");
        clock.advance(Duration.ofSeconds(3));
        lines.tick();
        assertThat(printed())
                .containsExactly(
                        "recount reconcile: comparing stream and batch (5 s)",
                        "recount reconcile: writing the report (10 s)");
    }

    @Test
    void aCountedStepSaysHowFarItIsAtWhatRateAndHowLongIsLeft() {
        lines.step("writing the report");
        clock.advance(Duration.ofSeconds(65));
        lines.count(13_000, 20_000, "rows");
        assertThat(printed())
                .containsExactly("recount reconcile: writing the report, 13,000 of 20,000 rows (65 %), 200 rows/s,"
                        + " about 35 s left (1 min 05 s)");
    }

    @Test
    void anEstimateThatWasLowGrowsRatherThanPassingAHundredPercent() {
        lines.step("sending");
        clock.advance(Duration.ofSeconds(10));
        lines.count(1_050, 1_000, "records");
        assertThat(printed())
                .containsExactly("recount reconcile: sending, 1,050 of 1,050 records (100 %), 105 records/s (10 s)");
    }

    @Test
    void nothingIsPrintedAfterClose() {
        lines.step("comparing stream and batch");
        lines.close();
        clock.advance(Duration.ofMinutes(1));
        lines.tick();
        lines.step("writing the report");
        assertThat(captured.toString()).isEmpty();
    }

    @Test
    void noneShowsNothingAndCanBeClosedTwice() {
        Progress.NONE.step("anything");
        Progress.NONE.count(1, 2, "rows");
        Progress.NONE.close();
        Progress.NONE.close();
        Progress.NONE.step("still nothing");
    }

    @Test
    void theElapsedTimeReadsForPeople() {
        assertThat(Progress.elapsed(Duration.ofSeconds(42))).isEqualTo("42 s");
        assertThat(Progress.elapsed(Duration.ofSeconds(185))).isEqualTo("3 min 05 s");
    }

    @Test
    void onATerminalABarShowsTheStepAndTheCountAndIsClearedAtTheEnd() {
        List<String> drawn = new ArrayList<>();
        List<String> cleared = new ArrayList<>();
        ProgressBarConsumer consumer = new ProgressBarConsumer() {
            @Override
            public int getMaxRenderedLength() {
                return 120;
            }

            @Override
            public void accept(String rendered) {
                drawn.add(rendered);
            }

            @Override
            public void clear() {
                cleared.add("cleared");
            }

            @Override
            public void close() {}
        };
        TerminalBar terminal = new TerminalBar("recount generate", consumer);
        Progress bar = Progress.bar(terminal);
        bar.step("sending");
        bar.count(250, 1000, "records");
        terminal.refresh();
        assertThat(drawn).isNotEmpty();
        assertThat(drawn.get(drawn.size() - 1)).contains("recount generate", "250/1000", "sending");
        bar.close();
        assertThat(cleared).isNotEmpty();
    }
}
