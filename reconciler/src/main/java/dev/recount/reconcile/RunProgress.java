package dev.recount.reconcile;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;

/**
 * What a reconciliation run tells the person (or log) waiting for it: the step it is on and, where it can count
 * them, the rows of that step done. A run that takes more than a few seconds (a day of many keys) is otherwise
 * silent until it ends. Never affects the run: a display that fails is the display's problem.
 */
public interface RunProgress extends AutoCloseable {
    /** Shows nothing (the library default, and {@code reconcile pending}'s many small runs). */
    RunProgress NONE = new RunProgress() {
        @Override
        public void stage(String name) {}

        @Override
        public void rows(long done, long total) {}

        @Override
        public void close() {}
    };

    /** The run started step {@code name}, e.g. "comparing stream and batch". */
    void stage(String name);

    /** {@code done} of {@code total} rows of the current step are done. */
    void rows(long done, long total);

    @Override
    void close();

    /**
     * A bar on the terminal when there is one and the output is for a person (no {@code --json}); otherwise plain
     * lines on {@code err}, at most one every {@link ProgressLines#EVERY}, so a log stays readable.
     */
    static RunProgress forCommand(boolean terminal, boolean json, PrintStream terminalErr, PrintWriter err) {
        return terminal && !json ? new ProgressBarDisplay(terminalErr) : ProgressLines.start(err, ProgressLines.EVERY);
    }

    /** Whether the process runs attached to a terminal ({@link System#console()}: stdin and stdout are one). */
    static boolean onTerminal() {
        return System.console() != null;
    }

    /** Seconds, for people: "42 s", "3 min 05 s". */
    static String elapsed(Duration d) {
        long s = d.toSeconds();
        return s < 60 ? s + " s" : String.format(java.util.Locale.ROOT, "%d min %02d s", s / 60, s % 60);
    }
}
