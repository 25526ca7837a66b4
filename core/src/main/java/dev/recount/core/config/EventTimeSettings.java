package dev.recount.core.config;

import dev.recount.core.window.WindowAlignment;
import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * The event-time rules (CONTRACT §2–§3) in one value, so the stream job, the batch layer and the tests
 * all judge windows, lateness and validity the same way.
 *
 * <p>{@code validation} rides along (it holds the event-time range around the record timestamp, and the cost
 * ceiling): whoever is handed these settings validates input with the configured rules, not with defaults.
 */
public record EventTimeSettings(
        Duration windowSize,
        Duration outOfOrderness,
        Duration allowedLateness,
        Duration idleness,
        Duration dedupHorizon,
        ValidationSettings validation)
        implements Serializable {

    public EventTimeSettings {
        requirePositive(windowSize, "windowSize");
        requireNonNegative(outOfOrderness, "outOfOrderness");
        requireNonNegative(allowedLateness, "allowedLateness");
        requirePositive(idleness, "idleness");
        Objects.requireNonNull(validation, "validation");
        Duration needed = windowSize.plus(outOfOrderness).plus(allowedLateness);
        Objects.requireNonNull(dedupHorizon, "dedupHorizon");
        if (dedupHorizon.compareTo(needed) < 0) {
            throw new IllegalArgumentException("dedupHorizon " + Durations.format(dedupHorizon)
                    + " is shorter than window + out-of-orderness + allowed lateness = " + Durations.format(needed)
                    + ": duplicates arriving within lateness would be counted twice");
        }
    }

    /** The contract's defaults: 1 min windows, 30 s out-of-orderness, 2 min lateness, 1 min idleness. */
    public static EventTimeSettings defaults() {
        return RecountConfig.defaults().eventTime();
    }

    public EventTimeSettings withWindowSize(Duration d) {
        return new EventTimeSettings(
                d,
                outOfOrderness,
                allowedLateness,
                idleness,
                maxDuration(dedupHorizon, d.plus(outOfOrderness).plus(allowedLateness)),
                validation);
    }

    public EventTimeSettings withOutOfOrderness(Duration d) {
        return new EventTimeSettings(
                windowSize,
                d,
                allowedLateness,
                idleness,
                maxDuration(dedupHorizon, windowSize.plus(d).plus(allowedLateness)),
                validation);
    }

    public EventTimeSettings withAllowedLateness(Duration d) {
        return new EventTimeSettings(
                windowSize,
                outOfOrderness,
                d,
                idleness,
                maxDuration(dedupHorizon, windowSize.plus(outOfOrderness).plus(d)),
                validation);
    }

    public EventTimeSettings withIdleness(Duration d) {
        return new EventTimeSettings(windowSize, outOfOrderness, allowedLateness, d, dedupHorizon, validation);
    }

    /** How far event_ts may lie before the record timestamp: {@code validation().maxPast()}. */
    public Duration maxPast() {
        return validation.maxPast();
    }

    /** How far event_ts may lie after the record timestamp: {@code validation().maxFuture()}. */
    public Duration maxFuture() {
        return validation.maxFuture();
    }

    public WindowAlignment windows() {
        return new WindowAlignment(windowSize.toMillis());
    }

    private static Duration maxDuration(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static void requirePositive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isZero() || d.isNegative()) throw new IllegalArgumentException(name + " must be positive, got " + d);
    }

    private static void requireNonNegative(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative()) throw new IllegalArgumentException(name + " must not be negative, got " + d);
    }
}
