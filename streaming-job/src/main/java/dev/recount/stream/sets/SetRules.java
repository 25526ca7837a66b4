package dev.recount.stream.sets;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.EventTime;
import java.io.Serializable;
import java.util.Objects;

/**
 * One metric set as the job counts it: its definition and the event-time rules of its windows (its own window size,
 * the job's allowed lateness). Every operator judges a set's windows, firings and lateness by {@link #time()} alone.
 */
public record SetRules(MetricSet set, EventTime time) implements Serializable {
    public SetRules {
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(time, "time");
        if (time.sizeMillis() != set.window().toMillis()) {
            throw new IllegalArgumentException("set " + set.name() + " has " + set.window() + " windows, its rules "
                    + time.sizeMillis() + " ms ones");
        }
    }

    public String name() {
        return set.name();
    }

    /** The end of the window starting at {@code windowStart}. */
    public long windowEnd(long windowStart) {
        return windowStart + time.sizeMillis();
    }
}
