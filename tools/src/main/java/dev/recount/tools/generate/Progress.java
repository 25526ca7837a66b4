package dev.recount.tools.generate;

import java.io.PrintWriter;

/** Prints a progress line at most every two seconds, and carries an asynchronous send failure to the sender. */
public final class Progress {
    private final PrintWriter out;
    private final String what;
    private final long startNanos = System.nanoTime();
    private long lastPrint = System.nanoTime();
    private volatile Exception failure;

    public Progress(PrintWriter out, String what) {
        this.out = out;
        this.what = what;
    }

    void tick(long n) {
        long now = System.nanoTime();
        if (now - lastPrint > 2_000_000_000L) {
            out.printf("%s: %d records, %.0f/s%n", what, n, n / ((now - startNanos) / 1e9));
            out.flush();
            lastPrint = now;
        }
    }

    void fail(Exception e) {
        if (failure == null) failure = e;
    }

    void rethrow() {
        if (failure != null) throw new IllegalStateException("sending to Kafka failed: " + failure.getMessage(), failure);
    }
}
