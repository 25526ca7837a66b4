package dev.recount.deploy.generate;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.metrics.Metric;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The exact per-window totals of what the generator sent, computed with core's metric definitions: what
 * {@code window_metrics} must show once the range is reconciled. Counts of duplicates and invalid records
 * by reason come along so a run can be checked end to end.
 */
public final class GroundTruth {
    private final WindowAlignment windows;
    private final Map<WindowKey, MetricsAccumulator> main = new HashMap<>();
    private final Map<WindowKey, MetricsAccumulator> tail = new HashMap<>();
    private final Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
    private long validMain;
    private long validTail;
    private long duplicates;
    private long tooLateIntended;
    private TrafficProfile profile;
    private int quietPartition;
    private long quietFromTs;
    private long quietToTs;

    public GroundTruth(WindowAlignment windows) {
        this.windows = windows;
    }

    void describe(TrafficProfile profile, int quietPartition, long quietFromTs, long quietToTs) {
        this.profile = profile;
        this.quietPartition = quietPartition;
        this.quietFromTs = quietFromTs;
        this.quietToTs = quietToTs;
    }

    void addValid(AdEvent e, boolean inMain, boolean tooLate) {
        WindowKey key = new WindowKey(windows.windowStart(e.eventTs), e.campaignId, e.channelId);
        (inMain ? main : tail).computeIfAbsent(key, k -> new MetricsAccumulator()).add(e);
        if (inMain) validMain++; else validTail++;
        if (tooLate) tooLateIntended++;
    }

    void addDuplicate() {
        duplicates++;
    }

    void addInvalid(InvalidReason reason) {
        invalid.merge(reason, 1L, Long::sum);
    }

    /** Expected metrics per window key of the main range, sorted by key. */
    public Map<WindowKey, WindowMetrics> mainWindows() {
        Map<WindowKey, WindowMetrics> out = new TreeMap<>(KEY_ORDER);
        main.forEach((k, acc) -> out.put(k, acc.toMetrics()));
        return out;
    }

    public long validMain() { return validMain; }
    public long validTail() { return validTail; }
    public long duplicates() { return duplicates; }
    public long tooLateIntended() { return tooLateIntended; }
    public Map<InvalidReason, Long> invalidByReason() { return Map.copyOf(invalid); }
    public long invalidTotal() { return invalid.values().stream().mapToLong(Long::longValue).sum(); }
    public int quietPartition() { return quietPartition; }

    public WindowMetrics mainTotals() {
        return main.values().stream().map(MetricsAccumulator::toMetrics).reduce(WindowMetrics.ZERO, WindowMetrics::plus);
    }

    static final Comparator<WindowKey> KEY_ORDER = Comparator.comparingLong(WindowKey::windowStartMillis)
            .thenComparing(WindowKey::campaignId).thenComparing(WindowKey::channelId);

    /** Writes {@code expected.csv} (one row per window key, main and tail) and {@code summary.json} into {@code dir}. */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        try (Writer w = Files.newBufferedWriter(dir.resolve("expected.csv"), StandardCharsets.UTF_8)) {
            w.write("range,window_start,window_end,campaign_id,channel_id");
            for (Metric m : Metric.values()) w.write("," + m.column());
            w.write("\n");
            writeRows(w, "main", main);
            writeRows(w, "tail", tail);
        }
        StringBuilder j = new StringBuilder("{\n");
        field(j, "seed", Long.toString(profile.seed()));
        field(j, "main_from", quote(profile.start().toString()));
        field(j, "main_to", quote(profile.mainEnd().toString()));
        field(j, "tail_to", quote(profile.tailEnd().toString()));
        field(j, "window_size_ms", Long.toString(windows.sizeMillis()));
        field(j, "valid_main", Long.toString(validMain));
        field(j, "valid_tail", Long.toString(validTail));
        field(j, "duplicates_sent", Long.toString(duplicates));
        field(j, "too_late_intended", Long.toString(tooLateIntended));
        field(j, "invalid_total", Long.toString(invalidTotal()));
        StringBuilder reasons = new StringBuilder("{");
        for (InvalidReason r : InvalidReason.values()) {
            if (reasons.length() > 1) reasons.append(", ");
            reasons.append(quote(r.wireName())).append(": ").append(invalid.getOrDefault(r, 0L));
        }
        field(j, "invalid_by_reason", reasons.append('}').toString());
        field(j, "windows_main", Integer.toString(main.size()));
        WindowMetrics t = mainTotals();
        field(j, "main_totals", "{\"impressions\": " + t.impressions() + ", \"clicks\": " + t.clicks()
                + ", \"conversions\": " + t.conversions() + ", \"spend_micros\": " + t.spendMicros()
                + ", \"events\": " + t.events() + "}");
        field(j, "quiet_partition", Integer.toString(quietPartition));
        field(j, "quiet_from", quote(Instant.ofEpochMilli(quietFromTs).toString()));
        j.append("  \"quiet_to\": ").append(quote(Instant.ofEpochMilli(quietToTs).toString())).append("\n}\n");
        Files.writeString(dir.resolve("summary.json"), j.toString(), StandardCharsets.UTF_8);
    }

    private void writeRows(Writer w, String range, Map<WindowKey, MetricsAccumulator> rows) throws IOException {
        Map<WindowKey, MetricsAccumulator> sorted = new TreeMap<>(KEY_ORDER);
        sorted.putAll(rows);
        for (Map.Entry<WindowKey, MetricsAccumulator> e : sorted.entrySet()) {
            WindowKey k = e.getKey();
            WindowMetrics m = e.getValue().toMetrics();
            w.write(range + "," + Instant.ofEpochMilli(k.windowStartMillis()) + ","
                    + Instant.ofEpochMilli(k.windowStartMillis() + windows.sizeMillis()) + ","
                    + k.campaignId() + "," + k.channelId());
            for (Metric metric : Metric.values()) w.write("," + m.get(metric));
            w.write("\n");
        }
    }

    private static void field(StringBuilder j, String name, String jsonValue) {
        j.append("  ").append(quote(name)).append(": ").append(jsonValue).append(",\n");
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
