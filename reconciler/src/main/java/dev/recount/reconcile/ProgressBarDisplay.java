package dev.recount.reconcile;

import java.io.PrintStream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarConsumer;

/**
 * Progress as a bar on a terminal (me.tongfei:progressbar), redrawn in place on stderr: the step as its message,
 * elapsed time always, and a filling bar with an estimate when the step counts rows (the report); a step that
 * cannot count (one long SQL statement) shows an indefinite bar. Cleared when the run ends, so the summary the
 * command prints stands alone.
 */
final class ProgressBarDisplay implements RunProgress {
    private final ProgressBar bar;

    ProgressBarDisplay(PrintStream terminal) {
        this(new ConsoleProgressBarConsumer(terminal));
    }

    /** On any consumer (tests capture what would be drawn). */
    ProgressBarDisplay(ProgressBarConsumer consumer) {
        this.bar = new ProgressBarBuilder()
                .setTaskName("reconcile")
                .setInitialMax(-1)
                .setConsumer(consumer)
                .setUpdateIntervalMillis(250)
                .continuousUpdate()
                .clearDisplayOnFinish()
                .build();
    }

    @Override
    public void stage(String name) {
        bar.maxHint(-1);
        bar.stepTo(0);
        bar.setExtraMessage(name);
    }

    @Override
    public void rows(long done, long total) {
        bar.maxHint(total);
        bar.stepTo(done);
    }

    @Override
    public void close() {
        bar.close();
    }

    /** Redraws now (tests; the bar otherwise redraws on its own every 250 ms). */
    void refresh() {
        bar.refresh();
    }
}
