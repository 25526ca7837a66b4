package dev.recount.tools.generate;

import java.io.PrintWriter;
import java.util.Locale;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * How far generating is, and an asynchronous send failure carried to the sender. On a terminal a bar
 * (me.tongfei:progressbar, on stderr) with the records done of the expected total and an estimate of the time left;
 * otherwise, so that logs stay readable, a plain line at most every two seconds with the same facts.
 */
public final class Progress implements AutoCloseable {
    private static final long LINE_EVERY_NANOS = 2_000_000_000L;

    private final PrintWriter out;
    private final String what;
    /** About how many records will be sent; 0 when unknown. */
    private final long expected;

    private final ProgressBar bar;
    private final long startNanos = System.nanoTime();
    private long lastPrint = System.nanoTime();
    private volatile Exception failure;

    /** Plain lines only, without a total. */
    public Progress(PrintWriter out, String what) {
        this(out, what, 0, false);
    }

    private Progress(PrintWriter out, String what, long expected, boolean onTerminal) {
        this.out = out;
        this.what = what;
        this.expected = Math.max(0, expected);
        this.bar = onTerminal
                ? terminalBar(what, expected > 0 ? expected : -1, " records")
                        .showSpeed()
                        .build()
                : null;
    }

    /** For a command: a bar when it runs on a terminal, else plain lines; {@code expected} records (about). */
    public static Progress forCommand(PrintWriter out, String what, long expected) {
        return new Progress(out, what, expected, onTerminal());
    }

    /** Whether the command runs attached to a terminal (then progress is a bar, else plain lines). */
    public static boolean onTerminal() {
        return System.console() != null;
    }

    /**
     * The tools' progress bar on stderr: {@code task}, {@code max} steps of {@code unit} (-1: unknown), redrawn
     * every 250 ms, cleared when closed so the command's result stands alone.
     */
    public static ProgressBarBuilder terminalBar(String task, long max, String unit) {
        return new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(max)
                .setStyle(ProgressBarStyle.ASCII)
                .setUnit(unit, 1)
                .setUpdateIntervalMillis(250)
                .clearDisplayOnFinish();
    }

    /** About how many records {@code profile} sends: its events, their duplicates and the invalid records. */
    public static long expectedRecords(TrafficProfile profile) {
        return Math.round(profile.events() * (1 + profile.duplicateShare() + profile.invalidShare()));
    }

    void tick(long n) {
        if (bar != null) {
            if (n > bar.getMax() && bar.getMax() > 0) bar.maxHint(n); // the tail and rounding: "about"
            bar.stepTo(n);
            return;
        }
        long now = System.nanoTime();
        if (now - lastPrint > LINE_EVERY_NANOS) {
            out.println(line(n, (now - startNanos) / 1e9));
            out.flush();
            lastPrint = now;
        }
    }

    /** "generate: 12,000 of about 61,800 records (19 %), 3,000/s, about 16 s left". */
    String line(long n, double seconds) {
        double rate = seconds > 0 ? n / seconds : 0;
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%s: %,d", what, n));
        if (expected > 0) {
            s.append(String.format(
                    Locale.ROOT, " of about %,d records (%d %%)", expected, Math.min(100, n * 100 / expected)));
        } else {
            s.append(" records");
        }
        s.append(String.format(Locale.ROOT, ", %,.0f/s", rate));
        if (expected > n && rate > 0) {
            s.append(String.format(Locale.ROOT, ", about %,d s left", (long) Math.ceil((expected - n) / rate)));
        }
        return s.toString();
    }

    void fail(Exception e) {
        if (failure == null) failure = e;
    }

    void rethrow() {
        if (failure != null)
            throw new IllegalStateException("sending to Kafka failed: " + failure.getMessage(), failure);
    }

    /** Clears the bar (nothing to do for lines). */
    @Override
    public void close() {
        if (bar != null) bar.close();
    }
}
