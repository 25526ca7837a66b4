package dev.recount.core.config;

import dev.recount.core.attribution.AttributionRule;
import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * Impression–click attribution ({@code attribution.*}): whether the stream job computes it, and how long after an
 * impression a click or conversion may still be attributed to it.
 *
 * @param enabled whether the stream job runs the attribution join ({@code attribution.enabled}); the batch layer
 *                and the reconciler compute and compare it whenever asked
 * @param window  the attribution window ({@code attribution.window}), positive
 */
public record AttributionSettings(boolean enabled, Duration window) implements Serializable {

    public AttributionSettings {
        Objects.requireNonNull(window, "window");
        if (window.isZero() || window.isNegative()) {
            throw new IllegalArgumentException("attribution window must be positive, got " + Durations.format(window));
        }
    }

    /** The documented defaults: enabled, 30 minutes. */
    public static AttributionSettings defaults() {
        return RecountConfig.defaults().attribution();
    }

    /** The rule these settings define. */
    public AttributionRule rule() {
        return new AttributionRule(window.toMillis());
    }
}
