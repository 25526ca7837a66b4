package dev.recount.core.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations as the contract writes them: ISO-8601 ({@code PT30S}) or shorthand ({@code 30s}). */
public final class Durations {
    private static final Pattern SHORTHAND = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    private Durations() {}

    public static Duration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("duration is empty; expected e.g. 30s, 5m, 1h, 7d or PT30S");
        }
        String trimmed = text.trim();
        Matcher m = SHORTHAND.matcher(trimmed.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        }
        try {
            Duration parsed = Duration.parse(trimmed.toUpperCase(Locale.ROOT));
            if (parsed.isNegative()) {
                throw new IllegalArgumentException("duration '" + text + "' is negative");
            }
            return parsed;
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "cannot read duration '" + text + "'; expected e.g. 30s, 5m, 1h, 7d or PT30S", e);
        }
    }

    /** The shortest shorthand that reads back as the same duration, for messages and reports. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0 && ms != 0) return ms / 86_400_000 + "d";
        if (ms % 3_600_000 == 0 && ms != 0) return ms / 3_600_000 + "h";
        if (ms % 60_000 == 0 && ms != 0) return ms / 60_000 + "m";
        if (ms % 1_000 == 0) return ms / 1_000 + "s";
        return ms + "ms";
    }
}
