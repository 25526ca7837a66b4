package dev.recount.core.cli;

import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarConsumer;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * {@link Progress} on a terminal: a bar (me.tongfei:progressbar) on stderr with the step as its message and, when
 * the step counts, how much is done with an estimate; a step that cannot count shows an indefinite bar. Cleared when
 * closed. Its own class, so that the progressbar library is loaded only on a terminal: core declares it optional,
 * and a process without a terminal (a cluster's driver, a Flink job) never needs it.
 */
final class TerminalBar {
    private final ProgressBar bar;

    /** On any consumer (tests capture what would be drawn). */
    TerminalBar(String task, ProgressBarConsumer consumer) {
        this.bar = new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(-1)
                .setStyle(ProgressBarStyle.ASCII)
                .setConsumer(consumer)
                .setUpdateIntervalMillis(250)
                .continuousUpdate()
                .clearDisplayOnFinish()
                .build();
    }

    static TerminalBar onStderr(String task) {
        return new TerminalBar(task, new ConsoleProgressBarConsumer(System.err));
    }

    void step(String name) {
        bar.maxHint(-1);
        bar.stepTo(0);
        bar.setExtraMessage(name);
    }

    void count(long done, long total) {
        bar.maxHint(total);
        bar.stepTo(done);
    }

    /** Redraws now (tests; the bar otherwise redraws on its own every 250 ms). */
    void refresh() {
        bar.refresh();
    }

    void close() {
        bar.close();
    }
}
