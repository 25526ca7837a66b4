package dev.recount.batch;

import dev.recount.core.lake.LakeLayout;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/** One hour directory of the lake, {@code event_date=YYYY-MM-DD/event_hour=HH} (UTC, by event time). */
record LakeHour(LocalDate date, int hour) implements Comparable<LakeHour> {
    LakeHour {
        if (date == null) throw new IllegalArgumentException("date must not be null");
        if (hour < 0 || hour > 23) throw new IllegalArgumentException("hour must be 0..23, got " + hour);
    }

    static LakeHour containing(long millis) {
        ZonedDateTime t = Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC);
        return new LakeHour(t.toLocalDate(), t.getHour());
    }

    /** The hour of an {@code event_hour=HH} directory inside an {@code event_date=...} one; empty for anything else. */
    static Optional<LakeHour> parse(String dateDirectory, String hourDirectory) {
        Optional<LocalDate> date = parseDate(dateDirectory);
        String prefix = LakeLayout.HOUR_PARTITION + "=";
        if (date.isEmpty() || !hourDirectory.startsWith(prefix) || hourDirectory.length() != prefix.length() + 2) {
            return Optional.empty();
        }
        try {
            int h = Integer.parseInt(hourDirectory.substring(prefix.length()));
            return h >= 0 && h <= 23 ? Optional.of(new LakeHour(date.get(), h)) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The date of an {@code event_date=YYYY-MM-DD} directory; empty for anything else. */
    static Optional<LocalDate> parseDate(String dateDirectory) {
        String prefix = LakeLayout.DATE_PARTITION + "=";
        if (!dateDirectory.startsWith(prefix)) return Optional.empty();
        try {
            return Optional.of(LocalDate.parse(dateDirectory.substring(prefix.length())));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    long startMillis() {
        return date.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli() + hour * LakeLayout.HOUR_MILLIS;
    }

    long endMillis() {
        return startMillis() + LakeLayout.HOUR_MILLIS;
    }

    /** The directory below the lake root, e.g. {@code event_date=2026-11-28/event_hour=07}. */
    String relativePath() {
        return LakeLayout.partitionPath(startMillis());
    }

    /** A name for files about this hour, e.g. {@code 2026-11-28T07} (no ':' — Hadoop paths refuse it). */
    String id() {
        return date + "T" + String.format("%02d", hour);
    }

    @Override
    public int compareTo(LakeHour o) {
        return Long.compare(startMillis(), o.startMillis());
    }

    @Override
    public String toString() {
        return relativePath();
    }
}
