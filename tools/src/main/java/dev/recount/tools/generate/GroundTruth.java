package dev.recount.tools.generate;

import dev.recount.core.attribution.AttributionAccumulator;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The exact per-window totals of what the generator sent, computed with core's metric definitions: what
 * {@code window_metrics} must show once the range is reconciled. Counts of duplicates and invalid records
 * by reason come along so a run can be checked end to end.
 *
 * <p>Attribution ({@link AttributionRule}) per window of the click or conversion, too. The generator draws events in
 * event-time order, so when a click is judged every impression at or before it is known: only each request's latest
 * impression so far is kept (the one that could attribute), and forgotten once it is a window behind. Clicks are
 * judged when event time moves past their millisecond, so an impression drawn after them at the same millisecond
 * still counts, as the rule says.
 */
public final class GroundTruth {
    private final WindowAlignment windows;
    private final Map<WindowKey, MetricsAccumulator> main = new HashMap<>();
    private final Map<WindowKey, MetricsAccumulator> tail = new HashMap<>();
    private final Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
    private final AttributionRule attribution;
    private final Map<WindowKey, AttributionAccumulator> attributionMain = new HashMap<>();
    private final Map<WindowKey, AttributionAccumulator> attributionTail = new HashMap<>();
    /** Request id → event time of its latest impression so far. */
    private final Map<String, Long> latestImpression = new HashMap<>();
    /** Clicks and conversions at {@link #judgedBefore}'s millisecond, not judged yet, and whether each is main. */
    private final List<AdEvent> unjudged = new ArrayList<>();

    private final List<Boolean> unjudgedInMain = new ArrayList<>();
    private long judgedBefore = Long.MIN_VALUE;
    private long forgetBefore = Long.MIN_VALUE;
    private long validMain;
    private long validTail;
    private long duplicates;
    private long tooLateIntended;
    private TrafficProfile profile;
    private int quietPartition;
    private long quietFromTs;
    private long quietToTs;

    /** With the default attribution window ({@link AttributionRule#DEFAULT_WINDOW}). */
    public GroundTruth(WindowAlignment windows) {
        this(windows, AttributionRule.of(AttributionRule.DEFAULT_WINDOW));
    }

    public GroundTruth(WindowAlignment windows, AttributionRule attribution) {
        this.windows = windows;
        this.attribution = attribution;
    }

    void describe(TrafficProfile profile, int quietPartition, long quietFromTs, long quietToTs) {
        this.profile = profile;
        this.quietPartition = quietPartition;
        this.quietFromTs = quietFromTs;
        this.quietToTs = quietToTs;
    }

    void addValid(AdEvent e, boolean inMain, boolean tooLate) {
        WindowKey key = new WindowKey(windows.windowStart(e.eventTs), e.campaignId, e.channelId);
        (inMain ? main : tail)
                .computeIfAbsent(key, k -> new MetricsAccumulator())
                .add(e);
        if (inMain) validMain++;
        else validTail++;
        if (tooLate) tooLateIntended++;
        attribute(e, inMain);
    }

    private void attribute(AdEvent e, boolean inMain) {
        if (e.eventTs < judgedBefore) {
            throw new IllegalStateException("events must come in event-time order: " + e + " after " + judgedBefore);
        }
        if (e.eventTs > judgedBefore) judgeUnjudged();
        judgedBefore = e.eventTs;
        if (AttributionRule.isCandidateImpression(e)) {
            latestImpression.merge(e.requestId, e.eventTs, Math::max);
        } else if (AttributionRule.isAttributable(e)) {
            unjudged.add(e);
            unjudgedInMain.add(inMain);
        }
    }

    /** Judges the clicks and conversions of the last millisecond; every impression that can attribute them is known. */
    private void judgeUnjudged() {
        for (int i = 0; i < unjudged.size(); i++) {
            AdEvent c = unjudged.get(i);
            Long impressionTs = c.requestId == null ? null : latestImpression.get(c.requestId);
            boolean attributed = impressionTs != null && attribution.attributes(impressionTs, c.eventTs);
            WindowKey key = new WindowKey(windows.windowStart(c.eventTs), c.campaignId, c.channelId);
            (unjudgedInMain.get(i) ? attributionMain : attributionTail)
                    .computeIfAbsent(key, k -> new AttributionAccumulator())
                    .decided(c, attributed);
        }
        unjudged.clear();
        unjudgedInMain.clear();
        // Now and then, forget impressions no later click can reach.
        long horizon = attribution.earliestImpressionTs(judgedBefore);
        if (judgedBefore != Long.MIN_VALUE && horizon - forgetBefore > attribution.windowMillis()) {
            latestImpression.values().removeIf(ts -> ts < horizon);
            forgetBefore = horizon;
        }
    }

    /** Expected attribution metrics per window key (window of the click or conversion) of the main range. */
    public Map<WindowKey, AttributionMetrics> attributionMain() {
        return attributionRows(attributionMain);
    }

    /** Expected attribution metrics per window key of the tail (after the main range). */
    public Map<WindowKey, AttributionMetrics> attributionTail() {
        return attributionRows(attributionTail);
    }

    public AttributionRule attributionRule() {
        return attribution;
    }

    public AttributionMetrics attributionMainTotals() {
        return attributionMain().values().stream().reduce(AttributionMetrics.ZERO, AttributionMetrics::plus);
    }

    private Map<WindowKey, AttributionMetrics> attributionRows(Map<WindowKey, AttributionAccumulator> sums) {
        judgeUnjudged();
        Map<WindowKey, AttributionMetrics> out = new TreeMap<>(KEY_ORDER);
        sums.forEach((k, acc) -> {
            if (!acc.isZero()) out.put(k, acc.toMetrics());
        });
        return out;
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

    public long validMain() {
        return validMain;
    }

    public long validTail() {
        return validTail;
    }

    public long duplicates() {
        return duplicates;
    }

    public long tooLateIntended() {
        return tooLateIntended;
    }

    public Map<InvalidReason, Long> invalidByReason() {
        return Map.copyOf(invalid);
    }

    public long invalidTotal() {
        return invalid.values().stream().mapToLong(Long::longValue).sum();
    }

    public int quietPartition() {
        return quietPartition;
    }

    public WindowMetrics mainTotals() {
        return main.values().stream()
                .map(MetricsAccumulator::toMetrics)
                .reduce(WindowMetrics.ZERO, WindowMetrics::plus);
    }

    static final Comparator<WindowKey> KEY_ORDER = Comparator.comparingLong(WindowKey::windowStartMillis)
            .thenComparing(WindowKey::campaignId)
            .thenComparing(WindowKey::channelId);

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
        try (Writer w = Files.newBufferedWriter(dir.resolve("expected_attribution.csv"), StandardCharsets.UTF_8)) {
            w.write("range,window_start,window_end,campaign_id,channel_id,"
                    + String.join(",", AttributionMetrics.COLUMNS));
            w.write("\n");
            writeAttributionRows(w, "main", attributionMain());
            writeAttributionRows(w, "tail", attributionTail());
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
        field(
                j,
                "main_totals",
                "{\"impressions\": " + t.impressions() + ", \"clicks\": " + t.clicks()
                        + ", \"conversions\": " + t.conversions() + ", \"spend_micros\": " + t.spendMicros()
                        + ", \"events\": " + t.events() + "}");
        AttributionMetrics a = attributionMainTotals();
        field(j, "attribution_window_ms", Long.toString(attribution.windowMillis()));
        field(
                j,
                "attribution_main_totals",
                "{\"attributed_clicks\": " + a.attributedClicks()
                        + ", \"attributed_conversions\": " + a.attributedConversions() + ", \"unattributed_clicks\": "
                        + a.unattributedClicks() + ", \"attributed_spend_micros\": " + a.attributedSpendMicros() + "}");
        field(j, "quiet_partition", Integer.toString(quietPartition));
        field(j, "quiet_from", quote(Instant.ofEpochMilli(quietFromTs).toString()));
        j.append("  \"quiet_to\": ")
                .append(quote(Instant.ofEpochMilli(quietToTs).toString()))
                .append("\n}\n");
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

    private void writeAttributionRows(Writer w, String range, Map<WindowKey, AttributionMetrics> rows)
            throws IOException {
        for (Map.Entry<WindowKey, AttributionMetrics> e : rows.entrySet()) {
            WindowKey k = e.getKey();
            w.write(range + "," + Instant.ofEpochMilli(k.windowStartMillis()) + ","
                    + Instant.ofEpochMilli(k.windowStartMillis() + windows.sizeMillis()) + ","
                    + k.campaignId() + "," + k.channelId());
            for (int i = 0; i < AttributionMetrics.COLUMNS.length; i++)
                w.write("," + e.getValue().get(i));
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
