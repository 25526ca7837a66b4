package dev.recount.db.tables;

import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowKey;
import java.io.Serializable;
import java.util.Objects;

/** One window key with its metrics, as stored in the stream and batch tables. */
public record WindowRow(WindowKey key, long windowEndMillis, WindowMetrics metrics) implements Serializable {
    public WindowRow {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(metrics, "metrics");
        if (windowEndMillis <= key.windowStartMillis()) {
            throw new IllegalArgumentException("windowEndMillis " + windowEndMillis
                    + " must be after windowStartMillis " + key.windowStartMillis());
        }
    }
}
