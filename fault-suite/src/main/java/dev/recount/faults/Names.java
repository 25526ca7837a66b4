package dev.recount.faults;

import java.util.concurrent.atomic.AtomicLong;

/** Names of the suite's own topics and schemas: unique per JVM and call, so rounds never see each other's data. */
final class Names {
    private static final AtomicLong COUNTER = new AtomicLong();
    private static final String RUN = Long.toString(ProcessHandle.current().pid(), 36);

    private Names() {}

    /** e.g. {@code unique("faults-in")} → {@code faults-in-k3x-7}; only [a-z0-9-]. */
    static String unique(String prefix) {
        return prefix.toLowerCase().replaceAll("[^a-z0-9]+", "-") + "-" + RUN + "-" + COUNTER.incrementAndGet();
    }
}
