package dev.recount.core.config;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * Which input records are valid at all (CONTRACT §1), beyond the fixed rules in core's {@code EventValidator}:
 * the event-time range around the Kafka record timestamp and the largest {@code cost_micros} accepted.
 *
 * @param maxPast       how far event_ts may lie before the record timestamp ({@code validation.max-past})
 * @param maxFuture     how far event_ts may lie after it ({@code validation.max-future})
 * @param maxCostMicros the largest cost_micros accepted ({@code validation.max-cost-micros}); a ceiling well below
 *                      {@code Long.MAX_VALUE} keeps one absurd value from overflowing a window's spend sum
 */
public record ValidationSettings(Duration maxPast, Duration maxFuture, long maxCostMicros) implements Serializable {

    public ValidationSettings {
        Objects.requireNonNull(maxPast, "maxPast");
        Objects.requireNonNull(maxFuture, "maxFuture");
        if (maxPast.isNegative()) throw new IllegalArgumentException("maxPast must not be negative, got " + maxPast);
        if (maxFuture.isNegative())
            throw new IllegalArgumentException("maxFuture must not be negative, got " + maxFuture);
        if (maxCostMicros < 0) {
            throw new IllegalArgumentException("maxCostMicros must not be negative, got " + maxCostMicros);
        }
    }

    /** The documented defaults: 7 days past, 5 minutes future, 10^12 micros (1,000,000.00 currency units). */
    public static ValidationSettings defaults() {
        return RecountConfig.defaults().validation();
    }

    public ValidationSettings withMaxCostMicros(long max) {
        return new ValidationSettings(maxPast, maxFuture, max);
    }
}
