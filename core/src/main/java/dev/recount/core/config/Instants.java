package dev.recount.core.config;

import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;

/** Parses instants ({@code 2026-11-29T10:00:00Z}) and dates ({@code 2026-11-28}) as the contract writes them. */
public final class Instants {
    private Instants() {}

    public static Instant parseInstant(String text) {
        try {
            return Instant.parse(text.trim());
        } catch (DateTimeParseException | NullPointerException e) {
            throw new IllegalArgumentException(
                    "cannot read instant '" + text + "'; expected ISO-8601 UTC like 2026-11-29T10:00:00Z", e);
        }
    }

    public static LocalDate parseDate(String text) {
        try {
            return LocalDate.parse(text.trim());
        } catch (DateTimeParseException | NullPointerException e) {
            throw new IllegalArgumentException("cannot read date '" + text + "'; expected like 2026-11-28", e);
        }
    }
}
