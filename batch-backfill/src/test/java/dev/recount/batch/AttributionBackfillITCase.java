package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.attribution.Attribution;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code backfill range} with attribution on: the lake read from one attribution window before the range, the join's
 * edge cases by hand, and random traffic against core's reference ({@link Attribution}).
 */
class AttributionBackfillITCase {
    private static final long SECOND = 1_000;
    private static final long MINUTE = 60_000;
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final String FROM = "2026-11-28T10:00:00Z";
    private static final String TO = "2026-11-28T10:05:00Z";
    private static final long WINDOW = 10 * MINUTE;

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir).set("attribution.enabled", "true").set("attribution.window", "10m");
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
    }

    private static long offsets = 1_000;

    static LakeEvent event(String id, String type, long ts, String requestId, long cost) {
        return LakeEvent.of(id, type, ts, "c1", "ch1", cost, offsets++).withRequestId(requestId);
    }

    /** Every edge case of the join, each in a window of its own where possible. */
    static List<LakeEvent> edgeCases() {
        return List.of(
                // 10:00 — its impression is one window and a millisecond before it (and before the lookback).
                event("imp-r0", "impression", W - WINDOW - 1, "r0", 3),
                event("click-r0", "click", W, "r0", 100),
                // 10:01 — the click's event time is before its impression's; one without a request id; a conversion.
                event("click-before", "click", W + MINUTE, "r2", 100),
                event("imp-r2", "impression", W + MINUTE + 1, "r2", 3),
                event("click-no-id", "click", W + MINUTE + 30 * SECOND, null, 100),
                event("conv-r1", "conversion", W + MINUTE + 40 * SECOND, "r1", 5_000),
                // 10:02 — exactly at the window's bound, and one millisecond beyond it.
                event("imp-r1", "impression", W + 2 * MINUTE - WINDOW, "r1", 3),
                event("click-bound", "click", W + 2 * MINUTE, "r1", 100),
                event("click-beyond", "click", W + 2 * MINUTE + 1, "r1", 100),
                // 10:03 — an impression that reached the lake an hour late still attributes in the batch layer.
                event("imp-r3", "impression", W + 2 * MINUTE, "r3", 3).receivedAfter(3_600_000),
                event("click-r3", "click", W + 3 * MINUTE, "r3", 300),
                // 10:04 — a duplicated impression, a second impression of the request, a duplicated click: once.
                event("imp-r4", "impression", W + 3 * MINUTE, "r4", 3),
                event("imp-r4", "impression", W + 3 * MINUTE, "r4", 3).copyAt("ad-events", 1, 7),
                event("imp-r4b", "impression", W + 3 * MINUTE + 30 * SECOND, "r4", 3),
                event("click-r4", "click", W + 4 * MINUTE, "r4", 400),
                event("click-r4", "click", W + 4 * MINUTE, "r4", 400).copyAt("ad-events", 2, 9),
                // Not counted: a conversion without request id (its key would be all zero), a click after the range.
                LakeEvent.of("conv-none", "conversion", W + MINUTE, "c1", "ch9", 9, offsets++),
                event("click-after", "click", W + 5 * MINUTE, "r1", 100));
    }

    @Test
    void theJoinsEdgeCasesAreCountedByTheRule() throws Exception {
        t.lake.write(edgeCases());
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(attributionRows())
                .containsExactly(
                        row(W, 0, 0, 1, 0),
                        row(W + MINUTE, 0, 1, 2, 5_000),
                        row(W + 2 * MINUTE, 1, 0, 1, 100),
                        row(W + 3 * MINUTE, 1, 0, 0, 300),
                        row(W + 4 * MINUTE, 1, 0, 0, 400));
        assertThat(t.lastRun().details()).contains("\"attribution_rows\": 5");

        // Rerunning gives identical rows; a key that lost its clicks vanishes.
        List<AttributionRow> first = attributionRows();
        assertThat(t.backfill("range", "--from", FROM, "--to", TO)).isZero();
        assertThat(attributionRows()).isEqualTo(first);
    }

    @Test
    void withAttributionOffTheTablesAreLeftAlone() throws Exception {
        t.lake.write(edgeCases());
        t.set("attribution.enabled", "false");
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        assertThat(attributionRows()).isEmpty();
        assertThat(t.batchRows()).isNotEmpty();
    }

    /**
     * Every set with attribution on gets its own rows, keyed by its dimensions of the click (here a declared attribute
     * read from the lake's JSON) and its windows; a set with attribution off gets none.
     */
    @Test
    void eachSetWithAttributionOnIsKeyedByItsDimensionsOfTheClick() throws Exception {
        var sets = t.metricSets("""
                version: 1
                attributes:
                  slot_id: {type: string, default: none}
                sets:
                  - name: default
                  - name: campaign_slot
                    dimensions: [campaign_id, slot_id]
                    measures:
                      - {name: clicks, kind: count, where: {event_type: click}}
                    window: 5m
                    attribution: true
                  - name: channel_slot
                    dimensions: [channel_id, slot_id]
                    measures:
                      - {name: clicks, kind: count, where: {event_type: click}}
                    attribution: false
                """);
        t.lake.write(List.of(
                event("imp-r1", "impression", W - MINUTE, "r1", 3).withAttributes("{\"slot_id\":\"s9\"}"),
                event("click-r1", "click", W + 10 * SECOND, "r1", 100).withAttributes("{\"slot_id\":\"s1\"}"),
                event("click-none", "click", W + 20 * SECOND, null, 50).withAttributes("{\"slot_id\":\"s2\"}"),
                event("conv-r1", "conversion", W + 3 * MINUTE, "r1", 500).withAttributes("{\"slot_id\":\"s1\"}"),
                // Its slot_id breaks the id rule: left out of campaign_slot's attribution as of its windows.
                event("click-bad", "click", W + 30 * SECOND, "r1", 7).withAttributes("{\"slot_id\":\"\"}")));

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        var slot = sets.set("campaign_slot").orElseThrow();
        try (Connection c = t.admin()) {
            assertThat(new BatchAttributionMetricsTable(new SetTables(slot))
                            .readRange(c, W - 60 * MINUTE, W + 60 * MINUTE))
                    .containsExactly(
                            new AttributionRow(
                                    WindowKey.of(W, "c1", "s1"), W + 5 * MINUTE, new AttributionMetrics(1, 1, 0, 600)),
                            new AttributionRow(
                                    WindowKey.of(W, "c1", "s2"), W + 5 * MINUTE, new AttributionMetrics(0, 0, 1, 0)));
            // A set with attribution off has no attribution tables at all (migrate makes none), and the run needs none.
            String none = new SetTables(sets.set("channel_slot").orElseThrow()).batchAttributionMetrics();
            try (var rs = c.createStatement().executeQuery("SELECT to_regclass('" + none + "') IS NULL")) {
                rs.next();
                assertThat(rs.getBoolean(1)).as(none).isTrue();
            }
        }
        // The default set keeps its own, by campaign and channel per minute (the bad click counts there).
        assertThat(attributionRows()).containsExactly(row(W, 2, 0, 1, 107), row(W + 3 * MINUTE, 0, 1, 0, 500));
        assertThat(t.lastRun().details()).contains("\"attribution_rows\": 2");
    }

    /** Random traffic with every kind of follow-up: the batch result equals core's rule applied in memory. */
    @Test
    void randomTrafficMatchesTheReference() throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        List<LakeEvent> events = new ArrayList<>();
        List<String> requests = new ArrayList<>();
        Map<String, Long> impressionTs = new HashMap<>();
        long start = W - 20 * MINUTE;
        for (int i = 0; i < 3_000; i++) {
            long ts = start + random.nextLong(30 * MINUTE);
            String campaign = "c" + random.nextInt(3);
            String channel = "ch" + random.nextInt(2);
            double u = random.nextDouble();
            LakeEvent e;
            if (u < 0.7 || requests.isEmpty()) {
                String request = random.nextDouble() < 0.05 && !requests.isEmpty()
                        ? requests.get(random.nextInt(requests.size()))
                        : "req-" + i;
                requests.add(request);
                impressionTs.put("imp-" + i, ts);
                e = new LakeEvent(
                        "imp-" + i, "impression", ts, campaign, channel, 3, "ad-events", 0, offsets++, ts, request);
            } else {
                String request = random.nextDouble() < 0.05 ? null : requests.get(random.nextInt(requests.size()));
                String type = random.nextDouble() < 0.8 ? "click" : "conversion";
                e = new LakeEvent(
                        "f-" + i,
                        type,
                        ts,
                        campaign,
                        channel,
                        random.nextLong(1_000_000),
                        "ad-events",
                        0,
                        offsets++,
                        ts,
                        request);
            }
            events.add(e);
            if (random.nextDouble() < 0.05) events.add(e.copyAt("ad-events", 1, offsets++));
        }
        t.lake.write(events);
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        Attribution reference = new Attribution(new AttributionRule(WINDOW));
        events.forEach(e -> reference.add(toAdEvent(e)));
        Map<WindowKey, AttributionMetrics> expected = new HashMap<>(reference.perWindow(TestSets.defaultSet()));
        expected.keySet().removeIf(k -> k.windowStartMillis() < W || k.windowStartMillis() >= W + 5 * MINUTE);
        Map<WindowKey, AttributionMetrics> actual = new HashMap<>();
        attributionRows().forEach(r -> actual.put(r.key(), r.metrics()));
        assertThat(actual).isEqualTo(expected);
        assertThat(expected.values().stream()
                        .mapToLong(AttributionMetrics::attributedClicks)
                        .sum())
                .isPositive();
        assertThat(expected.values().stream()
                        .mapToLong(AttributionMetrics::unattributedClicks)
                        .sum())
                .isPositive();
    }

    static AdEvent toAdEvent(LakeEvent e) {
        return new AdEvent(
                e.eventId(),
                EventType.fromWire(e.eventType()).orElseThrow(),
                e.eventTs(),
                e.campaignId(),
                e.channelId(),
                e.costMicros(),
                e.requestId(),
                e.topic(),
                e.partition(),
                e.offset(),
                e.recordTs());
    }

    static AttributionRow row(long windowStart, long attributed, long conversions, long unattributed, long spend) {
        return new AttributionRow(
                WindowKey.of(windowStart, "c1", "ch1"),
                windowStart + MINUTE,
                new AttributionMetrics(attributed, conversions, unattributed, spend));
    }

    List<AttributionRow> attributionRows() throws Exception {
        try (Connection c = t.admin()) {
            return new BatchAttributionMetricsTable(new SetTables(TestSets.defaultSet()))
                    .readRange(c, W - 60 * MINUTE, W + 60 * MINUTE);
        }
    }
}
