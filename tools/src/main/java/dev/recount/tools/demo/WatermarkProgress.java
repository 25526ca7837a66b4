package dev.recount.tools.demo;

import dev.recount.tools.generate.Progress;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import me.tongfei.progressbar.ProgressBar;

/**
 * How far the demo's wait for the watermark is: on a terminal a bar (me.tongfei:progressbar) of event-time seconds
 * from where the watermark first stood to the target; otherwise a plain line at most every five seconds, so that a
 * log stays readable.
 */
final class WatermarkProgress implements AutoCloseable {
    private static final long LINE_EVERY_NANOS = 5_000_000_000L;

    private final PrintWriter out;
    private final Instant target;
    private final boolean onTerminal;
    private ProgressBar bar;
    private Instant first;
    private long lastLine = System.nanoTime();

    WatermarkProgress(PrintWriter out, Instant target, boolean onTerminal) {
        this.out = out;
        this.target = target;
        this.onTerminal = onTerminal;
    }

    /** The watermark the lake is complete up to now (absent before the job's first commit). */
    void at(Instant watermark) {
        if (first == null) first = watermark.isBefore(target) ? watermark : target;
        long total = Duration.between(first, target).toSeconds();
        long done =
                Math.min(total, Math.max(0, Duration.between(first, watermark).toSeconds()));
        if (onTerminal) {
            if (bar == null) {
                bar = Progress.terminalBar("watermark", Math.max(1, total), " s of event time")
                        .build();
            }
            bar.stepTo(done);
            return;
        }
        long now = System.nanoTime();
        if (now - lastLine >= LINE_EVERY_NANOS) {
            out.println(line(watermark));
            out.flush();
            lastLine = now;
        }
    }

    /** "      watermark at 2026-11-29T10:04:30Z, 150s of event time to go". */
    String line(Instant watermark) {
        Duration left = Duration.between(watermark, target);
        return "      watermark at " + watermark
                + (left.isNegative() || left.isZero()
                        ? ", reached; waiting for the input" + " to be fully read"
                        : ", " + dev.recount.core.config.Durations.format(left) + " of event time to go");
    }

    @Override
    public void close() {
        if (bar != null) bar.close();
    }
}
