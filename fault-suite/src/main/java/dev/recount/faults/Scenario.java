package dev.recount.faults;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.sets.Attribute;
import dev.recount.tools.generate.GeneratedRecord;
import dev.recount.tools.generate.TrafficGenerator;
import dev.recount.tools.generate.TrafficProfile;
import dev.recount.tools.generate.TrafficShape;
import dev.recount.tools.generate.TrafficTally;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One round's traffic: generated records (with the attributes the metric sets declare) written as the JSON-lines file
 * `produce` sends, and any records the round sends itself with their own record timestamps ({@link #direct}). Not the
 * truth: that is the oracle's, of what the input topic holds once sent ({@link Sent}).
 *
 * <p>Event times lie in the minutes before the round starts: `produce` stamps records with the wall clock, and the
 * stream job never lets a watermark run ahead of the wall clock, so traffic from the future would stall it.
 *
 * @param start the first event time, on a window boundary of every set
 * @param mainEnd the end of the main traffic (a thin tail follows it, so that its windows close)
 */
record Scenario(Path file, Instant start, Instant mainEnd, List<PoisonCorpus.Direct> direct) {
    Scenario {
        direct = List.copyOf(direct);
    }

    /**
     * @param longestWindow the longest window of the metric sets: the traffic starts on one of its boundaries
     * @param attributes the attributes the metric sets declare, which the generator sends
     */
    static Scenario generate(
            Path dir,
            long events,
            Duration span,
            long seed,
            EventTimeSettings time,
            Duration longestWindow,
            List<Attribute> attributes,
            int partitions,
            Instant now)
            throws IOException {
        Duration tail = TrafficShape.closingTail(time);
        long longest = longestWindow.toMillis();
        long from = now.minus(span).minus(tail).minusSeconds(120).toEpochMilli();
        Instant start = Instant.ofEpochMilli(Math.floorDiv(from, longest) * longest);
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
                time.validation(),
                attributes);
        TrafficGenerator generator = new TrafficGenerator(profile, new TrafficTally());
        Files.createDirectories(dir);
        Path file = dir.resolve("traffic.jsonl");
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            while (generator.hasNext()) {
                GeneratedRecord r = generator.next();
                if (r.value() == null) continue; // a file line cannot be null
                out.write(r.value());
                out.write('\n');
            }
        }
        return new Scenario(file, start, profile.mainEnd(), List.of());
    }

    /** The middle of the main traffic's event time. */
    Instant middle() {
        return start.plus(Duration.between(start, mainEnd).dividedBy(2));
    }

    /**
     * This scenario with more records: {@code lines} appended to the file, and {@code direct} ones that the round
     * sends itself with their own record timestamps (a producer whose clock is off).
     */
    Scenario with(List<byte[]> lines, List<PoisonCorpus.Direct> more) throws IOException {
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.APPEND)) {
            for (byte[] line : lines) {
                out.write(line);
                out.write('\n');
            }
        }
        List<PoisonCorpus.Direct> all = new ArrayList<>(direct);
        all.addAll(more);
        return new Scenario(file, start, mainEnd, all);
    }

    /**
     * Every record this scenario sends, as values: the file's lines as `produce` reads them (without their line end,
     * blank ones skipped), then the direct records.
     */
    List<byte[]> values() throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        List<byte[]> values = new ArrayList<>();
        int from = 0;
        for (int i = 0; i <= bytes.length; i++) {
            if (i < bytes.length && bytes[i] != '\n') continue;
            int end = i > from && bytes[i - 1] == '\r' ? i - 1 : i;
            if (!blank(bytes, from, end)) values.add(java.util.Arrays.copyOfRange(bytes, from, end));
            from = i + 1;
        }
        direct.forEach(d -> values.add(d.value()));
        return values;
    }

    private static boolean blank(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) if (bytes[i] != ' ' && bytes[i] != '\t' && bytes[i] != '\r') return false;
        return true;
    }
}
