package dev.recount.db.tables;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import java.io.Serializable;
import java.util.Objects;

/** One window key of a metric set with its measure values, as stored in the set's stream and batch tables. */
public record WindowRow(WindowKey key, long windowEndMillis, MeasureValues values) implements Serializable {
    public WindowRow {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(values, "values");
        if (windowEndMillis <= key.windowStartMillis()) {
            throw new IllegalArgumentException("windowEndMillis " + windowEndMillis
                    + " must be after windowStartMillis " + key.windowStartMillis());
        }
    }
}
