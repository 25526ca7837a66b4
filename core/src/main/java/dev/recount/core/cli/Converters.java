package dev.recount.core.cli;

import dev.recount.core.config.Durations;
import dev.recount.core.config.Instants;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The time formats of the contract (docs/contract.md, time formats) as picocli converters, so every command reads
 * {@code 30s}, {@code PT30S}, {@code 2026-11-29T10:00:00Z} and {@code 2026-11-28} alike and rejects anything else
 * while parsing (exit 2), before any work starts.
 */
public final class Converters {
    private Converters() {}

    /** ISO-8601 ({@code PT30S}) or shorthand ({@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 7d}). */
    public static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Durations.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** ISO-8601 with a zone or offset, e.g. {@code 2026-11-29T10:00:00Z}. */
    public static final class InstantConverter implements ITypeConverter<Instant> {
        @Override
        public Instant convert(String value) {
            try {
                return Instants.parseInstant(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** A calendar date, e.g. {@code 2026-11-28}. */
    public static final class DateConverter implements ITypeConverter<LocalDate> {
        @Override
        public LocalDate convert(String value) {
            try {
                return Instants.parseDate(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code --since}: a date or a number of days back ({@link Since}). */
    public static final class SinceConverter implements ITypeConverter<Since> {
        @Override
        public Since convert(String value) {
            try {
                return Since.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** The old {@code --days N} of {@code reconcile pending}: N days back, as {@code --since Nd}. */
    public static final class DaysBackConverter implements ITypeConverter<Since> {
        @Override
        public Since convert(String value) {
            try {
                return Since.daysBack(Long.parseLong(value.strip()));
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not a number of days of at least 1");
            }
        }
    }
}
