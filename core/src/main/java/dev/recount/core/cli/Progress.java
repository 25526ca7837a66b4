package dev.recount.core.cli;

import dev.recount.core.time.ProcessClock;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What a long command tells the person (or log) waiting for it: the step it is on and, where it can count them, how
 * much of the step is done. The one display of every command: on a terminal (and without {@code --json}) a bar on
 * stderr, redrawn in place and cleared at the end so the command's result stands alone; otherwise plain lines on
 * stderr, at most one every {@link #EVERY} (or the command's {@code --progress-every}) and none for a command done
 * sooner, so a scheduler's log of quick runs stays as it was:
 *
 * <pre>
 * recount reconcile: writing the report, 12,000 of 20,158 rows (59 %), 2,400 rows/s, about 4 s left (55 s)
 * </pre>
 *
 * A heartbeat repeats the current step while one long statement runs and reports nothing. Never affects the work:
 * a display that fails is the display's problem. Thread-safe (Spark's status is read on a thread of its own).
 */
public final class Progress implements AutoCloseable {
    /** "At most one line every few seconds." */
    public static final Duration EVERY = Duration.ofSeconds(5);

    /** Shows nothing: library callers, tests, and commands run inside another (nightly's steps). */
    public static final Progress NONE = new Progress(null, null, null, Duration.ofDays(365), ProcessClock.SYSTEM, null);

    private final String label;
    private final PrintWriter lines;
    private final TerminalBar bar;
    private final long everyNanos;
    private final ProcessClock clock;
    private final ScheduledExecutorService heartbeat;
    private final long startNanos;
    private long lastLineNanos;
    private String step = "starting";
    private long stepStartNanos;
    private long done = -1;
    private long total = -1;
    private String unit = "";
    private boolean closed;

    private Progress(
            String label,
            PrintWriter lines,
            TerminalBar bar,
            Duration every,
            ProcessClock clock,
            ScheduledExecutorService heartbeat) {
        if (every.isNegative() || every.isZero())
            throw new IllegalArgumentException("progress every must be positive, got " + every);
        this.label = label;
        this.lines = lines;
        this.bar = bar;
        this.everyNanos = every.toNanos();
        this.clock = clock;
        this.heartbeat = heartbeat;
        this.startNanos = clock.nanoTime();
        this.lastLineNanos = startNanos;
        this.stepStartNanos = startNanos;
    }

    /**
     * The display of the command {@code spec}: a bar when the process runs on a terminal and {@code json} is off,
     * else lines on the command's stderr at most every {@code every}.
     */
    public static Progress forCommand(CommandSpec spec, boolean json, Duration every) {
        String label = RecountCli.path(spec);
        if (onTerminal() && !json)
            return new Progress(label, null, TerminalBar.onStderr(label), every, ProcessClock.SYSTEM, null);
        return lines(label, spec.commandLine().getErr(), every);
    }

    /** {@link #forCommand(CommandSpec, boolean, Duration)} at most every {@link #EVERY}. */
    public static Progress forCommand(CommandSpec spec, boolean json) {
        return forCommand(spec, json, EVERY);
    }

    /** Lines on {@code err} under {@code label}, with a daemon heartbeat checking once a second whether one is due. */
    public static Progress lines(String label, PrintWriter err, Duration every) {
        ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "recount-progress");
            t.setDaemon(true);
            return t;
        });
        Progress progress = new Progress(label, err, null, every, ProcessClock.SYSTEM, heartbeat);
        heartbeat.scheduleAtFixedRate(progress::tick, 1, 1, TimeUnit.SECONDS);
        return progress;
    }

    /** Lines on {@code clock} without a heartbeat: tests move the clock and call {@link #tick()}. */
    public static Progress lines(String label, PrintWriter err, Duration every, ProcessClock clock) {
        return new Progress(label, err, null, every, clock, null);
    }

    /** A bar drawn by {@code bar} (tests capture what would be drawn; see {@link TerminalBar}). */
    static Progress bar(TerminalBar bar) {
        return new Progress(null, null, bar, EVERY, ProcessClock.SYSTEM, null);
    }

    /** Whether the process runs attached to a terminal ({@link System#console()}: stdin and stdout are one). */
    public static boolean onTerminal() {
        return System.console() != null;
    }

    /** The command started step {@code name}, e.g. "comparing stream and batch"; nothing of it is counted yet. */
    public synchronized void step(String name) {
        if (closed || label == null && bar == null) return;
        step = Objects.requireNonNull(name, "name");
        stepStartNanos = clock.nanoTime();
        done = -1;
        total = -1;
        unit = "";
        if (bar != null) bar.step(name);
        tick();
    }

    /** {@code done} of {@code total} {@code unit} of the current step are done ({@code total} < 0: unknown). */
    public synchronized void count(long done, long total, String unit) {
        if (closed || label == null && bar == null) return;
        this.done = done;
        // An estimate ("about 61,800 records") that turns out low grows rather than showing 104 %.
        this.total = total < 0 ? -1 : Math.max(total, done);
        this.unit = unit;
        if (bar != null) bar.count(done, this.total);
        tick();
    }

    /** Prints the current step when the last line (or the start) is at least the interval ago. */
    public synchronized void tick() {
        if (closed || lines == null) return;
        long now = clock.nanoTime();
        if (now - lastLineNanos < everyNanos) return;
        lastLineNanos = now;
        lines.println(line(now));
        lines.flush();
    }

    /** The line a tick at {@code now} prints. */
    synchronized String line(long now) {
        StringBuilder s = new StringBuilder(label).append(": ").append(step);
        if (done >= 0) {
            s.append(String.format(Locale.ROOT, ", %,d", done));
            if (total >= 0) s.append(String.format(Locale.ROOT, " of %,d", total));
            if (!unit.isEmpty()) s.append(' ').append(unit);
            if (total > 0) s.append(String.format(Locale.ROOT, " (%d %%)", done * 100 / total));
            double seconds = (now - stepStartNanos) / 1e9;
            if (done > 0 && seconds >= 1) {
                double rate = done / seconds;
                s.append(String.format(Locale.ROOT, ", %,.0f%s/s", rate, unit.isEmpty() ? "" : " " + unit));
                if (total > done) {
                    long left = (long) Math.ceil((total - done) / rate);
                    s.append(", about ")
                            .append(elapsed(Duration.ofSeconds(left)))
                            .append(" left");
                }
            }
        }
        return s.append(" (")
                .append(elapsed(Duration.ofNanos(now - startNanos)))
                .append(')')
                .toString();
    }

    /** After this nothing more is shown: the command's own output (or error) follows alone. */
    @Override
    public synchronized void close() {
        if (closed || this == NONE) return;
        closed = true;
        if (heartbeat != null) heartbeat.shutdownNow();
        if (bar != null) bar.close();
    }

    /** Seconds, for people: "42 s", "3 min 05 s". */
    public static String elapsed(Duration d) {
        long s = d.toSeconds();
        return s < 60 ? s + " s" : String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
    }
}
