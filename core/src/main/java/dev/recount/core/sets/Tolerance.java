package dev.recount.core.sets;

import java.io.Serializable;
import java.math.BigDecimal;
import java.util.Objects;

/**
 * How far the stream may be from the batch for one measure before a key counts as beyond tolerance: within when
 * {@code |stream - batch| <= absolute} OR {@code |stream - batch| <= relative * |batch|}. The relative part is a
 * {@link BigDecimal}, compared as SQL numeric: "0.001" means exactly one in a thousand, not the nearest double.
 */
public record Tolerance(BigDecimal relative, long absolute) implements Serializable {
    public static final Tolerance EXACT = new Tolerance(BigDecimal.ZERO, 0);

    public Tolerance {
        Objects.requireNonNull(relative, "relative");
        if (relative.signum() < 0)
            throw new IllegalArgumentException("relative tolerance must be >= 0, got " + relative);
        if (absolute < 0) throw new IllegalArgumentException("absolute tolerance must be >= 0, got " + absolute);
    }
}
