package dev.recount.oracle;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings the truth depends on, with the defaults docs/contract.md §7 gives them.
 *
 * @param window            {@code window.size}: the window of a set that names none (the default set's too)
 * @param attribution       {@code attribution.enabled}: whether a set that does not say computes attribution
 * @param attributionWindow {@code attribution.window}: how long before a click its impression may be
 * @param maxPast           {@code validation.max-past}: the oldest valid event_ts before the record timestamp
 * @param maxFuture         {@code validation.max-future}: the newest valid event_ts after it
 * @param maxCostMicros     {@code validation.max-cost-micros}: the largest valid cost_micros
 */
public record OracleSettings(
        Duration window,
        boolean attribution,
        Duration attributionWindow,
        Duration maxPast,
        Duration maxFuture,
        long maxCostMicros) {

    public OracleSettings {
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(attributionWindow, "attributionWindow");
        Objects.requireNonNull(maxPast, "maxPast");
        Objects.requireNonNull(maxFuture, "maxFuture");
        if (window.isNegative() || window.isZero()) throw new IllegalArgumentException("window must be positive");
    }

    /** The contract's defaults: 1m windows, attribution off (30m when on), 7d past, 5m future, 10^12 micros. */
    public static OracleSettings defaults() {
        return new OracleSettings(
                Duration.ofMinutes(1),
                false,
                Duration.ofMinutes(30),
                Duration.ofDays(7),
                Duration.ofMinutes(5),
                1_000_000_000_000L);
    }

    /** The settings of a recount settings file (its keys as §7 names them), the defaults for those it leaves out. */
    public static OracleSettings fromProperties(Properties p) {
        OracleSettings d = defaults();
        return new OracleSettings(
                duration(p.getProperty("window.size"), d.window),
                p.containsKey("attribution.enabled")
                        ? Boolean.parseBoolean(
                                p.getProperty("attribution.enabled").trim())
                        : d.attribution,
                duration(p.getProperty("attribution.window"), d.attributionWindow),
                duration(p.getProperty("validation.max-past"), d.maxPast),
                duration(p.getProperty("validation.max-future"), d.maxFuture),
                p.containsKey("validation.max-cost-micros")
                        ? Long.parseLong(
                                p.getProperty("validation.max-cost-micros").trim())
                        : d.maxCostMicros);
    }

    private static final Pattern SHORTHAND = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    /** A duration as contract §5 writes them: ISO-8601 ({@code PT30S}) or shorthand ({@code 500ms, 30s, 5m, 1h, 7d}). */
    public static Duration duration(String text) {
        String t = text.trim();
        Matcher m = SHORTHAND.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        return Duration.parse(t.toUpperCase(Locale.ROOT));
    }

    private static Duration duration(String text, Duration fallback) {
        return text == null || text.isBlank() ? fallback : duration(text);
    }
}
