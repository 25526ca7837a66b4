package dev.recount.testkit;

import java.util.concurrent.atomic.AtomicLong;

/** Unique names for per-test topics, schemas and consumer groups, so tests never see each other's data. */
public final class TestNames {
    private static final AtomicLong COUNTER = new AtomicLong();
    private static final String RUN = Long.toString(ProcessHandle.current().pid(), 36);

    private TestNames() {}

    /** e.g. {@code unique("input")} → {@code input-k3x-7}; only [a-z0-9-]. */
    public static String unique(String prefix) {
        return prefix.toLowerCase().replaceAll("[^a-z0-9]+", "-") + "-" + RUN + "-" + COUNTER.incrementAndGet();
    }
}
