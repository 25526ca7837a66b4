package dev.recount.tools.generate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import dev.recount.core.metrics.MetricsAccumulator;
import dev.recount.core.metrics.WindowMetrics;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrafficGeneratorTest {
    static final Instant START = Instant.parse("2026-11-29T10:00:00Z");
    static final WindowAlignment MINUTE = new WindowAlignment(60_000);
    static final Duration TOO_LATE = Duration.ofMinutes(4);

    static TrafficProfile profile(long seed) {
        return new TrafficProfile(
                START,
                Duration.ofMinutes(5),
                Duration.ofMinutes(4),
                20_000,
                20,
                seed,
                3,
                Duration.ofSeconds(2),
                Duration.ofSeconds(45),
                0.01,
                TOO_LATE,
                0.02,
                0.01,
                0.4,
                0.6,
                ValidationSettings.defaults());
    }

    @Test
    void theSameSeedGivesTheSameRecordsInArrivalOrder() {
        List<GeneratedRecord> a = TrafficGenerator.all(profile(7), new GroundTruth(MINUTE));
        List<GeneratedRecord> b = TrafficGenerator.all(profile(7), new GroundTruth(MINUTE));

        assertThat(a).hasSameSizeAs(b);
        for (int i = 0; i < a.size(); i++) {
            assertThat(a.get(i).arrivalTs()).isEqualTo(b.get(i).arrivalTs());
            assertThat(a.get(i).value()).isEqualTo(b.get(i).value());
            if (i > 0)
                assertThat(a.get(i).arrivalTs())
                        .isGreaterThanOrEqualTo(a.get(i - 1).arrivalTs());
        }
    }

    /** An independent recount of what was sent: validate every record, count each event_id once. */
    @Test
    void groundTruthEqualsARecountOfTheRecordsActuallySent() {
        GroundTruth truth = new GroundTruth(MINUTE);
        List<GeneratedRecord> records = TrafficGenerator.all(profile(11), truth);
        EventValidator validator = new EventValidator(ValidationSettings.defaults());

        Map<WindowKey, MetricsAccumulator> recount = new HashMap<>();
        Map<InvalidReason, Long> invalid = new EnumMap<>(InvalidReason.class);
        Set<String> seen = new HashSet<>();
        long duplicates = 0;
        long mainEnd = START.plus(Duration.ofMinutes(5)).toEpochMilli();
        for (GeneratedRecord r : records) {
            ValidationResult v = validator.validate(r.value(), r.arrivalTs(), "t", r.partition(), 0);
            if (!v.isValid()) {
                invalid.merge(v.reason(), 1L, Long::sum);
                continue;
            }
            AdEvent e = v.event();
            if (!seen.add(e.eventId)) {
                duplicates++;
                continue;
            }
            if (e.eventTs < mainEnd) {
                recount.computeIfAbsent(
                                new WindowKey(MINUTE.windowStart(e.eventTs), e.campaignId, e.channelId),
                                k -> new MetricsAccumulator())
                        .add(e);
            }
        }
        Map<WindowKey, WindowMetrics> expected = new HashMap<>();
        recount.forEach((k, acc) -> expected.put(k, acc.toMetrics()));

        assertThat(truth.mainWindows()).containsExactlyInAnyOrderEntriesOf(expected);
        assertThat(truth.validMain()).isEqualTo(20_000);
        assertThat(duplicates).isEqualTo(truth.duplicates()).isGreaterThan(0);
        assertThat(invalid).isEqualTo(truth.invalidByReason());
        assertThat(invalid.keySet()).containsExactlyInAnyOrder(InvalidReason.values());
        assertThat(truth.invalidTotal()).isEqualTo(200);
    }

    @Test
    void everyInvalidClassAppearsWithItsReason() {
        List<GeneratedRecord> records = TrafficGenerator.all(profile(3), new GroundTruth(MINUTE));
        long nulls = records.stream().filter(r -> r.value() == null).count();
        long notUtf8 = records.stream()
                .filter(r -> r.value() != null && !isUtf8(r.value()))
                .count();

        assertThat(nulls).isPositive();
        assertThat(notUtf8).isPositive();
        assertThat(records.stream()
                        .filter(r -> r.kind() == GeneratedRecord.Kind.INVALID)
                        .map(GeneratedRecord::invalidReason))
                .contains(InvalidReason.values());
    }

    /** Each sample, judged by the validator on its own, fails for its reason, and the id samples name their rule. */
    @Test
    void everyInvalidSampleFailsForItsReason() {
        TrafficProfile p = profile(1);
        EventValidator validator = new EventValidator(p.validation());
        long at = START.toEpochMilli();
        Map<InvalidSample, String> details = new EnumMap<>(InvalidSample.class);
        for (InvalidSample s : InvalidSample.values()) {
            ValidationResult r = validator.validate(s.value("cmp-0001", at, p), at, "t", 0, 0);
            assertThat(r.isValid()).as(s.name()).isFalse();
            assertThat(r.reason()).as(s.name() + ": " + r).isEqualTo(s.reason);
            details.put(s, r.detail());
        }
        assertThat(details.get(InvalidSample.NUL_IN_ID))
                .contains("campaign_id has control character U+0000 at index 8");
        assertThat(details.get(InvalidSample.C1_CONTROL_IN_ID))
                .contains("channel_id has control character U+0085 at index 3");
        assertThat(details.get(InvalidSample.LONE_SURROGATE_ID))
                .contains("channel_id has unpaired surrogate U+D83D at index 3");
        assertThat(details.get(InvalidSample.COST_ABOVE_MAX))
                .contains("cost_micros 1000000000001 is above the maximum");
    }

    /**
     * Impressions carry request ids of their own (a few twice); clicks and conversions mostly an impression's of the
     * same campaign and channel, some beyond the attribution window, some of an impression after them in event time,
     * some none or an unknown one.
     */
    @Test
    void requestIdsFollowImpressionsWithHeavyTailedDelaysAndEveryUnattributedCase() {
        List<GeneratedRecord> records = TrafficGenerator.all(profile(13), new GroundTruth(MINUTE));
        EventValidator validator = new EventValidator(ValidationSettings.defaults());
        Map<String, List<AdEvent>> impressions = new HashMap<>();
        List<AdEvent> followUps = new java.util.ArrayList<>();
        for (GeneratedRecord r : records) {
            if (r.kind() != GeneratedRecord.Kind.VALID) continue;
            AdEvent e = validator.validate(r.value(), r.arrivalTs(), "t", 0, 0).event();
            if (e.eventType == EventType.IMPRESSION) {
                assertThat(e.requestId).as(e.toString()).matches("req-[0-9a-f]{16}");
                impressions
                        .computeIfAbsent(e.requestId, k -> new java.util.ArrayList<>())
                        .add(e);
            } else {
                followUps.add(e);
            }
        }
        long relogged = impressions.values().stream().filter(l -> l.size() > 1).count();
        long none = 0, unknown = 0, impressionLater = 0, within = 0;
        long window = dev.recount.core.attribution.AttributionRule.DEFAULT_WINDOW.toMillis();
        for (AdEvent e : followUps) {
            if (e.requestId == null) {
                none++;
                continue;
            }
            List<AdEvent> of = impressions.get(e.requestId);
            if (of == null) {
                unknown++;
                continue;
            }
            AdEvent first = of.get(0);
            assertThat(first.campaignId).isEqualTo(e.campaignId);
            assertThat(first.channelId).isEqualTo(e.channelId);
            if (first.eventTs > e.eventTs) impressionLater++;
            else if (e.eventTs - first.eventTs <= window) within++;
        }
        assertThat(followUps).hasSizeGreaterThan(500);
        assertThat(relogged).as("impressions logged twice").isPositive();
        assertThat(none).as("no request id").isPositive();
        assertThat(unknown).as("an unknown request id").isPositive();
        assertThat(impressionLater).as("the impression after the click").isPositive();
        assertThat((double) within / followUps.size())
                .as("attributable within the window")
                .isGreaterThan(0.8);
    }

    /** Over three hours, heavy-tailed delays put some clicks and conversions beyond a 30 min window. */
    @Test
    void someClicksFollowTheirImpressionBeyondTheAttributionWindow() {
        TrafficProfile longRun = new TrafficProfile(
                START,
                Duration.ofHours(3),
                Duration.ofMinutes(4),
                60_000,
                5,
                21,
                3,
                Duration.ofSeconds(2),
                Duration.ofSeconds(20),
                0.0,
                Duration.ofMinutes(10),
                0.0,
                0.0,
                0.0,
                0.0,
                ValidationSettings.defaults());
        GroundTruth truth = new GroundTruth(MINUTE);
        List<GeneratedRecord> records = TrafficGenerator.all(longRun, truth);
        dev.recount.core.attribution.AttributionMetrics t = truth.attributionMainTotals();
        assertThat(t.attributedClicks()).isPositive();
        // No request id, unknown, later impression: 8 % by construction; beyond the window adds about 2 % more.
        double unattributed = (double) t.unattributedClicks() / (t.unattributedClicks() + t.attributedClicks());
        assertThat(unattributed).isBetween(0.085, 0.2);
        assertThat(records).isNotEmpty();
    }

    /** The generator's incremental ground truth equals core's rule applied to every valid event sent, key by key. */
    @Test
    void attributionGroundTruthEqualsTheRuleAppliedToWhatWasSent() {
        GroundTruth truth =
                new GroundTruth(MINUTE, dev.recount.core.attribution.AttributionRule.of(Duration.ofSeconds(40)));
        List<GeneratedRecord> records = TrafficGenerator.all(profile(17), truth);
        EventValidator validator = new EventValidator(ValidationSettings.defaults());
        dev.recount.core.attribution.Attribution reference =
                new dev.recount.core.attribution.Attribution(truth.attributionRule(), MINUTE);
        for (GeneratedRecord r : records) {
            if (r.kind() == GeneratedRecord.Kind.INVALID) continue;
            reference.add(
                    validator.validate(r.value(), r.arrivalTs(), "t", 0, 0).event());
        }
        Map<dev.recount.core.window.WindowKey, dev.recount.core.attribution.AttributionMetrics> expected =
                new HashMap<>(truth.attributionMain());
        expected.putAll(truth.attributionTail());
        assertThat(reference.perWindow()).isEqualTo(expected);
        dev.recount.core.attribution.AttributionMetrics t = truth.attributionMainTotals();
        assertThat(t.attributedClicks()).isPositive();
        assertThat(t.unattributedClicks()).isPositive();
        assertThat(t.attributedConversions()).isPositive();
    }

    @Test
    void onePartitionIsQuietDuringTheQuietPhaseOnly() {
        GroundTruth truth = new GroundTruth(MINUTE);
        List<GeneratedRecord> records = TrafficGenerator.all(profile(5), truth);
        long quietFrom = START.plus(Duration.ofMinutes(2)).toEpochMilli();
        long quietTo = START.plus(Duration.ofMinutes(3)).toEpochMilli();
        int quiet = truth.quietPartition();

        List<GeneratedRecord> onQuiet =
                records.stream().filter(r -> r.partition() == quiet).toList();
        assertThat(onQuiet).isNotEmpty();
        // Silent in arrival time (what idleness sees) ...
        assertThat(onQuiet).noneMatch(r -> r.arrivalTs() >= quietFrom && r.arrivalTs() < quietTo);
        // ... with no events of its campaigns in the phase, while the other partitions carry on.
        assertThat(onQuiet)
                .noneMatch(r ->
                        r.kind() != GeneratedRecord.Kind.INVALID && r.eventTs() >= quietFrom && r.eventTs() < quietTo);
        assertThat(records)
                .anyMatch(r -> r.partition() != quiet && r.arrivalTs() >= quietFrom && r.arrivalTs() < quietTo);
    }

    @Test
    void arrivalDelaysFollowTheConfiguredMedianAndTail() {
        List<GeneratedRecord> records = TrafficGenerator.all(profile(9), new GroundTruth(MINUTE));
        long[] delays = records.stream()
                .filter(r -> r.kind() == GeneratedRecord.Kind.VALID)
                .mapToLong(r -> r.arrivalTs() - r.eventTs())
                .sorted()
                .toArray();
        long tooLate =
                Arrays.stream(delays).filter(d -> d >= TOO_LATE.toMillis()).count();

        assertThat(delays[delays.length / 2]).isBetween(1_700L, 2_300L);
        // 1 % too late plus the log-normal's own 1 % above 45 s: p98 sits near 45 s.
        assertThat(delays[(int) (delays.length * 0.98)]).isBetween(30_000L, 60_000L);
        assertThat((double) tooLate / delays.length).isBetween(0.006, 0.014);
    }

    @Test
    void writesExpectedTotalsAndASummaryNextToTheOutput(@TempDir Path dir) throws Exception {
        GroundTruth truth = new GroundTruth(MINUTE);
        TrafficGenerator.all(profile(1), truth);
        truth.write(dir);

        List<String> csv = Files.readAllLines(dir.resolve("expected.csv"));
        assertThat(csv.get(0))
                .isEqualTo(
                        "range,window_start,window_end,campaign_id,channel_id,impressions,clicks,conversions,spend_micros,events");
        assertThat(csv.stream().filter(l -> l.startsWith("main,")).count())
                .isEqualTo(truth.mainWindows().size());
        assertThat(Files.readString(dir.resolve("summary.json")))
                .contains("\"valid_main\": 20000")
                .contains("\"main_from\": \"2026-11-29T10:00:00Z\"");
    }

    static boolean isUtf8(byte[] b) {
        try {
            java.nio.charset.StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }
}
