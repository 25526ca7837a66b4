package dev.recount.core.config;

import dev.recount.core.window.EventTime;
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
        Duration needed = openFor(windowSize, outOfOrderness, allowedLateness);
        Objects.requireNonNull(dedupHorizon, "dedupHorizon");
        if (dedupHorizon.compareTo(needed) < 0) {
            throw new IllegalArgumentException("dedupHorizon " + Durations.format(dedupHorizon)
                    + " is shorter than window + out-of-orderness + allowed lateness = " + Durations.format(needed)
                    + ": duplicates arriving within lateness would be counted twice");
        }
    }

    /**
     * How long after an event's time its window may still take it, for a job keeping up with its input: the window,
     * the out-of-orderness and the allowed lateness. An event further behind its own record timestamp than this was
     * too late when it was sent.
     */
    public Duration openFor() {
        return openFor(windowSize, outOfOrderness, allowedLateness);
    }

    /**
     * How far behind its own record timestamp an event may be and still count for its partition's watermark and
     * activity: {@link #openFor()}, but at least an hour. Such an event was too late when it was sent; the hour
     * leaves room for a file of the last minutes sent again with new timestamps (as recount's fault suite does),
     * and bounds how far a partition fed nothing else can hold the job's watermark back.
     */
    public Duration lateOnArrival() {
        Duration open = openFor();
        return open.compareTo(LATE_ON_ARRIVAL_FLOOR) > 0 ? open : LATE_ON_ARRIVAL_FLOOR;
    }

    private static final Duration LATE_ON_ARRIVAL_FLOOR = Duration.ofHours(1);

    private static Duration openFor(Duration windowSize, Duration outOfOrderness, Duration allowedLateness) {
        return windowSize.plus(outOfOrderness).plus(allowedLateness);
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

    /** The event-time rules of {@link #windowSize()} windows with the allowed lateness: on time, late, too late. */
    public EventTime eventTime() {
        return new EventTime(windows(), allowedLateness.toMillis());
    }

    /** The event-time rules of {@code window}-sized windows (a metric set's) with the allowed lateness. */
    public EventTime eventTime(Duration window) {
        return new EventTime(new WindowAlignment(window.toMillis()), allowedLateness.toMillis());
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
