package dev.recount.reconcile;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.metrics.Metric;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * How far stream may be from batch, per metric, before a key counts as beyond tolerance. A key's metric is
 * within when {@code |stream - batch| <= absolute} OR {@code |stream - batch| <= relative * |batch|}; a side
 * with no row counts as 0 (so a key missing on one side is within only if its values are that small). A key
 * is within when all its metrics are; a run is within when all its keys are.
 *
 * <p>Relative tolerances are kept as {@link BigDecimal} and compared as SQL {@code numeric}: "0.001" must mean
 * exactly one in a thousand, not the nearest double.
 */
public final class Tolerances {
    /** One metric's tolerance. */
    public record Tolerance(BigDecimal relative, long absolute) {
        public Tolerance {
            Objects.requireNonNull(relative, "relative");
            if (relative.signum() < 0)
                throw new IllegalArgumentException("relative tolerance must be >= 0, got " + relative);
            if (absolute < 0) throw new IllegalArgumentException("absolute tolerance must be >= 0, got " + absolute);
        }
    }

    private final Map<Metric, Tolerance> byMetric;

    public Tolerances(Map<Metric, Tolerance> byMetric) {
        EnumMap<Metric, Tolerance> copy = new EnumMap<>(Metric.class);
        for (Metric m : Metric.values()) {
            copy.put(m, Objects.requireNonNull(byMetric.get(m), () -> "no tolerance for metric " + m.column()));
        }
        this.byMetric = Collections.unmodifiableMap(copy);
    }

    /** Exact: every difference is beyond tolerance. */
    public static Tolerances exact() {
        EnumMap<Metric, Tolerance> m = new EnumMap<>(Metric.class);
        for (Metric metric : Metric.values()) m.put(metric, new Tolerance(BigDecimal.ZERO, 0));
        return new Tolerances(m);
    }

    /** From {@code reconcile.tolerance.<metric>.relative} / {@code .absolute}. */
    public static Tolerances fromConfig(RecountConfig config) {
        EnumMap<Metric, Tolerance> m = new EnumMap<>(Metric.class);
        for (Metric metric : Metric.values()) {
            String relKey = "reconcile.tolerance." + metric.column() + ".relative";
            String absKey = "reconcile.tolerance." + metric.column() + ".absolute";
            BigDecimal rel;
            long abs;
            try {
                rel = new BigDecimal(config.get(relKey));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "setting " + relKey + " must be a decimal number, got '" + config.get(relKey) + "'", e);
            }
            try {
                abs = Long.parseLong(config.get(absKey));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "setting " + absKey + " must be a whole number, got '" + config.get(absKey) + "'", e);
            }
            try {
                m.put(metric, new Tolerance(rel, abs));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "setting reconcile.tolerance." + metric.column() + ": " + e.getMessage(), e);
            }
        }
        return new Tolerances(m);
    }

    public Tolerance of(Metric m) {
        return byMetric.get(m);
    }

    public Map<Metric, Tolerance> asMap() {
        return byMetric;
    }
}
