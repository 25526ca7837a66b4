package dev.recount.core.window;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * The key of one row of a metric set: its window start and its dimension values, in the set's dimension order
 * (CONTRACT §2). For the default set, {@code (window_start, campaign_id, channel_id)}.
 */
public record WindowKey(long windowStartMillis, List<String> dimensions) implements Serializable {
    public WindowKey {
        dimensions = List.copyOf(dimensions); // no nulls: every dimension of a valid event has a value
        if (dimensions.isEmpty()) throw new IllegalArgumentException("a window key has at least one dimension");
    }

    /** A key of {@code dimensions}, in the set's order. */
    public static WindowKey of(long windowStartMillis, String... dimensions) {
        return new WindowKey(windowStartMillis, List.of(dimensions));
    }

    /** Dimension {@code i}'s value. */
    public String dimension(int i) {
        return dimensions.get(i);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WindowKey k && k.windowStartMillis == windowStartMillis && k.dimensions.equals(dimensions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(windowStartMillis, dimensions);
    }
}
