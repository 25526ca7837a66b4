package dev.recount.reconcile;

import dev.recount.core.cli.Progress;

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

    /** The one display of every recount command ({@link Progress}) as a run's progress: steps, and rows counted. */
    static RunProgress of(Progress progress) {
        return new RunProgress() {
            @Override
            public void stage(String name) {
                progress.step(name);
            }

            @Override
            public void rows(long done, long total) {
                progress.count(done, total, "rows");
            }

            @Override
            public void close() {
                progress.close();
            }
        };
    }
}
