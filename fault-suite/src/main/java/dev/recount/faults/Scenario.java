package dev.recount.faults;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.tools.generate.GeneratedRecord;
import dev.recount.tools.generate.GroundTruth;
import dev.recount.tools.generate.TrafficGenerator;
import dev.recount.tools.generate.TrafficProfile;
import dev.recount.tools.generate.TrafficShape;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One round's traffic and its ground truth: generated records written as the JSON-lines file `produce` sends, and,
 * recounted independently from exactly what went into the file, every unique valid event by id, the windows they
 * make, how many valid records (first sends and duplicates) the lake must hold, and the invalid records by reason
 * the dead-letter topic must hold.
 *
 * <p>Event times lie in the minutes before the round starts: `produce` stamps records with the wall clock, and
 * the stream job never lets a watermark run ahead of the wall clock, so traffic from the future would stall it.
 */
record Scenario(
        Path file,
        Instant from,
        Instant to,
        Map<String, AdEvent> events,
        Map<WindowKey, WindowMetrics> truth,
        long validRecords,
        Map<InvalidReason, Long> invalidByReason) {

    static Scenario generate(
            Path dir, long events, Duration span, long seed, EventTimeSettings time, int partitions, Instant now)
            throws IOException {
        Duration tail = TrafficShape.closingTail(time);
        WindowAlignment windows = time.windows();
        Instant start = Instant.ofEpochMilli(windows.windowStart(
                now.minus(span).minus(tail).minusSeconds(120).toEpochMilli()));
        Duration tooLateDelay = time.windowSize()
                .plus(time.outOfOrderness().plus(time.allowedLateness()).multipliedBy(2));
        TrafficProfile profile = new TrafficProfile(
                start,
                span,
                tail,
                events,
                20,
                seed,
                partitions,
                Duration.ofSeconds(2),
                Duration.ofSeconds(20),
                0.02,
                tooLateDelay,
                0.02,
                0.01,
                0,
                0,
                time.validation());
        TrafficGenerator generator = new TrafficGenerator(profile, new GroundTruth(windows));
        // Judged as the job will judge them once sent: record time = the moment of sending, about now.
        EventValidator validator = new EventValidator(time.validation());

        Files.createDirectories(dir);
        Path file = dir.resolve("traffic.jsonl");
        Map<String, AdEvent> unique = new HashMap<>();
        Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
        long validRecords = 0;
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            while (generator.hasNext()) {
                GeneratedRecord r = generator.next();
                if (r.value() == null) continue; // a file line cannot be null
                out.write(r.value());
                out.write('\n');
                ValidationResult v = validator.validate(r.value(), now.toEpochMilli(), "input", 0, 0);
                if (r.kind() == GeneratedRecord.Kind.INVALID) {
                    if (v.isValid()) throw new IllegalStateException("a record generated as invalid is valid: " + r);
                    invalid.merge(v.reason(), 1L, Long::sum);
                    continue;
                }
                if (!v.isValid()) throw new IllegalStateException("a generated event is invalid (" + v.detail() + ")");
                validRecords++;
                unique.putIfAbsent(v.event().eventId, v.event());
            }
        }
        return of(file, unique, validRecords, invalid, windows);
    }

    /** The truth of {@code unique} events, by core's metric definitions, and the windows they span. */
    private static Scenario of(
            Path file,
            Map<String, AdEvent> unique,
            long validRecords,
            Map<InvalidReason, Long> invalid,
            WindowAlignment windows) {
        Map<WindowKey, MetricsAccumulator> sums = new HashMap<>();
        for (AdEvent e : unique.values()) {
            sums.computeIfAbsent(
                            new WindowKey(windows.windowStart(e.eventTs), e.campaignId, e.channelId),
                            k -> new MetricsAccumulator())
                    .add(e);
        }
        Map<WindowKey, WindowMetrics> truth = new HashMap<>();
        sums.forEach((k, acc) -> truth.put(k, acc.toMetrics()));
        long first = unique.values().stream().mapToLong(e -> e.eventTs).min().orElseThrow();
        long last = unique.values().stream().mapToLong(e -> e.eventTs).max().orElseThrow();
        return new Scenario(
                file,
                Instant.ofEpochMilli(windows.windowStart(first)),
                Instant.ofEpochMilli(windows.windowEnd(last)),
                Map.copyOf(unique),
                Map.copyOf(truth),
                validRecords,
                Map.copyOf(invalid));
    }

    /**
     * This scenario with more records: {@code lines} appended to the file (judged at {@code sentAround}, as
     * `produce` will stamp them), and {@code direct} values that the caller sends itself with their own record
     * timestamps (a producer whose clock is off). The truth and the expected dead letters follow the validator.
     */
    Scenario with(List<byte[]> lines, List<PoisonCorpus.Direct> direct, Instant sentAround, EventTimeSettings time)
            throws IOException {
        EventValidator validator = new EventValidator(time.validation());
        Map<String, AdEvent> unique = new HashMap<>(events);
        Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
        invalid.putAll(invalidByReason);
        long valid = validRecords;
        try (OutputStream out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.APPEND)) {
            for (byte[] line : lines) {
                out.write(line);
                out.write('\n');
            }
        }
        Map<byte[], Long> all = new java.util.LinkedHashMap<>();
        lines.forEach(l -> all.put(l, sentAround.toEpochMilli()));
        direct.forEach(d -> all.put(d.value(), d.recordTs()));
        for (Map.Entry<byte[], Long> e : all.entrySet()) {
            ValidationResult v = validator.validate(e.getKey(), e.getValue(), "input", 0, 0);
            if (!v.isValid()) {
                invalid.merge(v.reason(), 1L, Long::sum);
            } else {
                valid++;
                unique.putIfAbsent(v.event().eventId, v.event());
            }
        }
        return of(file, unique, valid, invalid, time.windows());
    }

    long invalidTotal() {
        return invalidByReason.values().stream().mapToLong(Long::longValue).sum();
    }
}
