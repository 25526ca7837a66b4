package dev.recount.tools.generate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.Attribution;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.Key;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.OracleSettings;
import dev.recount.oracle.SetTruth;
import dev.recount.oracle.Truth;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrafficGeneratorTest {
    static final Instant START = Instant.parse("2026-11-29T10:00:00Z");
    static final Duration TOO_LATE = Duration.ofMinutes(4);
    /** The demo's metric sets: slot_id, country (listed values) and device (required, listed values) declared. */
    static final Path DEMO_SETS = Path.of("../config/demo/metric-sets.yaml");

    static final ObjectMapper JSON = new ObjectMapper();

    static TrafficProfile profile(long seed) {
        return profile(seed, List.of());
    }

    static TrafficProfile profile(long seed, List<Attribute> attributes) {
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
                ValidationSettings.defaults(),
                attributes);
    }

    /** recount's reading of the demo's sets file, with attribution on (30 min) where a set does not say. */
    static MetricSets demoSets() throws Exception {
        return MetricSets.parse(
                Files.readString(DEMO_SETS),
                DEMO_SETS.toString(),
                RecountConfig.defaults().with("attribution.enabled", "true"));
    }

    /** The oracle's reading of the same file with the same settings. */
    static Oracle demoOracle() throws Exception {
        OracleSettings settings = new OracleSettings(
                Duration.ofMinutes(1),
                true,
                AttributionRule.DEFAULT_WINDOW,
                Duration.ofDays(7),
                Duration.ofMinutes(5),
                ValidationSettings.defaults().maxCostMicros());
        return new Oracle(Definitions.parse(Files.readString(DEMO_SETS), settings), settings);
    }

    @Test
    void theSameSeedGivesTheSameRecordsInArrivalOrder() throws Exception {
        List<Attribute> attributes = demoSets().attributes();
        List<GeneratedRecord> a = TrafficGenerator.all(profile(7, attributes), new TrafficTally());
        List<GeneratedRecord> b = TrafficGenerator.all(profile(7, attributes), new TrafficTally());

        assertThat(a).hasSameSizeAs(b);
        for (int i = 0; i < a.size(); i++) {
            assertThat(a.get(i).arrivalTs()).isEqualTo(b.get(i).arrivalTs());
            assertThat(a.get(i).value()).isEqualTo(b.get(i).value());
            if (i > 0)
                assertThat(a.get(i).arrivalTs())
                        .isGreaterThanOrEqualTo(a.get(i - 1).arrivalTs());
        }
    }

    /** The oracle, fed the records as sent, finds what the generator meant: its valid events, copies and dead letters. */
    @Test
    void theOracleJudgesTheRecordsAsTheGeneratorMeantThem() throws Exception {
        TrafficTally tally = new TrafficTally();
        Oracle oracle = demoOracle();
        for (GeneratedRecord r : TrafficGenerator.all(profile(11, demoSets().attributes()), tally)) {
            oracle.accept(r.value(), r.arrivalTs());
        }
        Truth truth = oracle.truth();

        Map<String, Long> intended = new TreeMap<>();
        tally.invalidByReason().forEach((reason, n) -> intended.put(reason.wireName(), n));
        assertThat(truth.invalidByReason()).isEqualTo(intended);
        assertThat(intended.keySet()).containsExactlyInAnyOrder("malformed", "schema", "timestamp");
        assertThat(truth.uniqueEvents()).isEqualTo(tally.validMain() + tally.validTail());
        assertThat(truth.duplicates()).isEqualTo(tally.duplicates()).isPositive();
        assertThat(tally.validMain()).isEqualTo(20_000);
        assertThat(tally.invalidTotal()).isEqualTo(200);
    }

    /**
     * recount's own definitions (core's validator with the declared attributes, MetricSet's per-event maths, core's
     * attribution rule) and the oracle, which shares none of that code, give the same rows for every set of the demo,
     * attribution included, on 20,000 generated events.
     */
    @Test
    void recountsDefinitionsAndTheOracleAgreeOnEverySetOfTheDemo() throws Exception {
        MetricSets sets = demoSets();
        List<GeneratedRecord> records = TrafficGenerator.all(profile(19, sets.attributes()), new TrafficTally());
        Oracle oracle = demoOracle();
        EventValidator validator = new EventValidator(ValidationSettings.defaults(), sets.attributes());
        Map<String, Map<WindowKey, MeasureSums>> sums = new HashMap<>();
        Attribution attribution = new Attribution(AttributionRule.of(AttributionRule.DEFAULT_WINDOW));
        Set<String> seen = new HashSet<>();
        for (GeneratedRecord r : records) {
            oracle.accept(r.value(), r.arrivalTs());
            ValidationResult v = validator.validate(r.value(), r.arrivalTs(), "t", r.partition(), 0);
            if (!v.isValid() || !seen.add(v.event().eventId)) continue;
            AdEvent e = v.event();
            attribution.add(e);
            for (MetricSet set : sets.sets()) {
                WindowKey key = WindowKey.of(set.windows().windowStart(e.eventTs), set.dimensionValues(e));
                set.add(
                        sums.computeIfAbsent(set.name(), n -> new HashMap<>()).computeIfAbsent(key, k -> set.newSums()),
                        e);
            }
        }
        Truth truth = oracle.truth();

        assertThat(truth.sets())
                .extracting(SetTruth::name)
                .containsExactly("default", "campaign_slot", "channel_country");
        for (MetricSet set : sets.sets()) {
            SetTruth t = truth.set(set.name());
            assertThat(t.set().measureNames()).isEqualTo(set.measureNames());
            Map<Key, List<BigInteger>> recount = new TreeMap<>();
            sums.get(set.name())
                    .forEach((k, s) -> recount.put(key(k), set.values(s).asList()));
            assertThat(recount).as(set.name()).hasSizeGreaterThan(50).containsExactlyEntriesOf(t.rows());
            if (set.attribution()) {
                Map<Key, List<BigInteger>> attributed = new TreeMap<>();
                attribution.perWindow(set).forEach((k, m) -> attributed.put(key(k), values(m)));
                assertThat(attributed).as(set.name() + " attribution").containsExactlyEntriesOf(t.attribution());
            } else {
                assertThat(t.attribution()).isNull();
            }
        }
    }

    @Test
    void everyEventCarriesTheDemosAttributesWithinTheirDeclaredValues() throws Exception {
        MetricSets sets = demoSets();
        List<GeneratedRecord> records = TrafficGenerator.all(profile(23, sets.attributes()), new TrafficTally());
        Map<String, Long> countries = new TreeMap<>();
        Map<String, Set<String>> slotsByCampaign = new HashMap<>();
        long valid = 0;
        long withoutCountry = 0;
        long undeclared = 0;
        for (GeneratedRecord r : records) {
            if (r.kind() == GeneratedRecord.Kind.INVALID) continue;
            JsonNode n = JSON.readTree(r.value());
            valid++;
            assertThat(n.path("device").asText()).isIn("mobile", "desktop", "tablet", "ctv");
            slotsByCampaign
                    .computeIfAbsent(n.get("campaign_id").asText(), c -> new HashSet<>())
                    .add(n.get("slot_id").asText());
            if (n.has("country")) countries.merge(n.get("country").asText(), 1L, Long::sum);
            else withoutCountry++;
            if (n.has("sdk")) undeclared++;
        }
        assertThat(countries.keySet()).isSubsetOf("US", "DE", "GB", "FR", "IN", "BR", "JP", "other");
        assertThat(countries.get("US")).as("skewed: US leads").isGreaterThan(countries.get("DE") * 2);
        assertThat((double) withoutCountry / valid)
                .as("country missing (default applies)")
                .isBetween(0.005, 0.02);
        assertThat((double) undeclared / valid).as("a field nobody declares").isBetween(0.015, 0.05);
        assertThat(slotsByCampaign.values())
                .allSatisfy(slots -> assertThat(slots).hasSizeBetween(1, 4));
        assertThat(slotsByCampaign.get("cmp-0001")).hasSizeBetween(2, 4);
    }

    /** With the attributes declared, the invalid records include a country outside its list and a slot id with a BEL. */
    @Test
    void everyInvalidClassAppearsWithItsReasonAttributesIncluded() throws Exception {
        List<GeneratedRecord> records =
                TrafficGenerator.all(profile(3, demoSets().attributes()), new TrafficTally());
        List<String> invalid = new ArrayList<>();
        for (GeneratedRecord r : records) {
            if (r.kind() == GeneratedRecord.Kind.INVALID && r.value() != null && isUtf8(r.value())) {
                invalid.add(new String(r.value(), StandardCharsets.UTF_8));
            }
        }
        assertThat(records).anyMatch(r -> r.value() == null);
        assertThat(records).anyMatch(r -> r.value() != null && !isUtf8(r.value()));
        assertThat(records.stream()
                        .filter(r -> r.kind() == GeneratedRecord.Kind.INVALID)
                        .map(GeneratedRecord::invalidReason))
                .contains(InvalidReason.values());
        assertThat(invalid).anyMatch(v -> v.contains("\"country\":\"ZZ\""));
        assertThat(invalid).anyMatch(v -> v.contains("\\u0007\""));
    }

    /** Without them, those two samples are valid events, so the generator does not send them. */
    @Test
    void withoutDeclaredAttributesNoRecordBreaksAnAttributesRule() {
        List<GeneratedRecord> records = TrafficGenerator.all(profile(3), new TrafficTally());
        assertThat(records)
                .filteredOn(r -> r.kind() == GeneratedRecord.Kind.INVALID && r.value() != null)
                .noneMatch(r -> new String(r.value(), StandardCharsets.UTF_8).contains("\"country\":\"ZZ\""));
    }

    /** Each sample, judged by the validator on its own, fails for its reason, and the id samples name their rule. */
    @Test
    void everyInvalidSampleFailsForItsReason() throws Exception {
        List<Attribute> declared = demoSets().attributes();
        TrafficProfile p = profile(1, declared);
        EventValidator validator = new EventValidator(p.validation(), declared);
        GeneratedAttributes attributes = new GeneratedAttributes(declared, 1);
        long at = START.toEpochMilli();
        Map<InvalidSample, String> details = new EnumMap<>(InvalidSample.class);
        for (InvalidSample s : InvalidSample.values()) {
            assertThat(s.breaks(attributes)).as(s.name()).isTrue();
            ValidationResult r =
                    validator.validate(s.value("cmp-0001", at, p, attributes.valid(0, "web")), at, "t", 0, 0);
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
        assertThat(details.get(InvalidSample.COUNTRY_OUTSIDE_LIST)).contains("country 'ZZ' is not one of");
        assertThat(details.get(InvalidSample.CONTROL_IN_SLOT_ID)).contains("slot_id has control character U+0007");
    }

    @Test
    void refusesDeclaredAttributesItCannotSatisfy() {
        RecountConfig defaults = RecountConfig.defaults();
        List<Attribute> browserRequired = MetricSets.parse(
                        "version: 1\nattributes:\n  browser: {type: string, required: true}\nsets:\n  - name: default\n",
                        "test",
                        defaults)
                .attributes();
        assertThatThrownBy(() -> new TrafficGenerator(profile(1, browserRequired), new TrafficTally()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("requires attribute browser");
        List<Attribute> countryNumber = MetricSets.parse(
                        "version: 1\nattributes:\n  country: {type: integer, default: 0}\nsets:\n  - name: default\n",
                        "test",
                        defaults)
                .attributes();
        assertThatThrownBy(() -> new TrafficGenerator(profile(1, countryNumber), new TrafficTally()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("country an integer attribute");
    }

    /**
     * Impressions carry request ids of their own (a few twice); clicks and conversions mostly an impression's of the
     * same campaign and channel, some beyond the attribution window, some of an impression after them in event time,
     * some none or an unknown one.
     */
    @Test
    void requestIdsFollowImpressionsWithHeavyTailedDelaysAndEveryUnattributedCase() {
        List<GeneratedRecord> records = TrafficGenerator.all(profile(13), new TrafficTally());
        EventValidator validator = new EventValidator(ValidationSettings.defaults());
        Map<String, List<AdEvent>> impressions = new HashMap<>();
        List<AdEvent> followUps = new ArrayList<>();
        for (GeneratedRecord r : records) {
            if (r.kind() != GeneratedRecord.Kind.VALID) continue;
            AdEvent e = validator.validate(r.value(), r.arrivalTs(), "t", 0, 0).event();
            if (e.eventType == EventType.IMPRESSION) {
                assertThat(e.requestId).as(e.toString()).matches("req-[0-9a-f]{16}");
                impressions.computeIfAbsent(e.requestId, k -> new ArrayList<>()).add(e);
            } else {
                followUps.add(e);
            }
        }
        long relogged = impressions.values().stream().filter(l -> l.size() > 1).count();
        long none = 0, unknown = 0, impressionLater = 0, within = 0;
        long window = AttributionRule.DEFAULT_WINDOW.toMillis();
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
        OracleSettings settings = new OracleSettings(
                Duration.ofMinutes(1),
                true,
                AttributionRule.DEFAULT_WINDOW,
                Duration.ofDays(7),
                Duration.ofMinutes(5),
                ValidationSettings.defaults().maxCostMicros());
        Oracle oracle = new Oracle(Definitions.defaultOnly(settings), settings);
        for (GeneratedRecord r : TrafficGenerator.all(longRun, new TrafficTally()))
            oracle.accept(r.value(), r.arrivalTs());
        List<BigInteger> t = oracle.truth().set("default").attributionTotals();
        long attributedClicks = t.get(0).longValueExact();
        long unattributedClicks = t.get(2).longValueExact();
        assertThat(attributedClicks).isPositive();
        // No request id, unknown, later impression: 8 % by construction; beyond the window adds about 2 % more.
        double unattributed = (double) unattributedClicks / (unattributedClicks + attributedClicks);
        assertThat(unattributed).isBetween(0.085, 0.2);
    }

    @Test
    void onePartitionIsQuietDuringTheQuietPhaseOnly() {
        TrafficTally tally = new TrafficTally();
        List<GeneratedRecord> records = TrafficGenerator.all(profile(5), tally);
        long quietFrom = START.plus(Duration.ofMinutes(2)).toEpochMilli();
        long quietTo = START.plus(Duration.ofMinutes(3)).toEpochMilli();
        int quiet = tally.quietPartition();

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
        List<GeneratedRecord> records = TrafficGenerator.all(profile(9), new TrafficTally());
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
    void writesEverySetsTruthAndASummary(@TempDir Path dir) throws Exception {
        TrafficTally tally = new TrafficTally();
        Oracle oracle = demoOracle();
        for (GeneratedRecord r : TrafficGenerator.all(profile(1, demoSets().attributes()), tally)) {
            oracle.accept(r.value(), r.arrivalTs());
        }
        Truth truth = oracle.truth();
        truth.write(dir);
        tally.writeSummary(dir, truth);

        assertThat(Files.readAllLines(dir.resolve("default.csv")).get(0))
                .isEqualTo("window_start,campaign_id,channel_id,impressions,clicks,conversions,spend_micros,events");
        assertThat(Files.readAllLines(dir.resolve("campaign_slot.csv")).get(0))
                .isEqualTo("window_start,campaign_id,slot_id,impressions,clicks,spend_micros,events");
        assertThat(dir.resolve("channel_country.attribution.csv")).exists();
        assertThat(dir.resolve("campaign_slot.attribution.csv")).doesNotExist();
        JsonNode summary = JSON.readTree(dir.resolve("summary.json").toFile());
        assertThat(summary.get("valid_main").asLong()).isEqualTo(20_000);
        assertThat(summary.get("main_from").asText()).isEqualTo("2026-11-29T10:00:00Z");
        assertThat(summary.at("/sets/default/totals/events").bigIntegerValue())
                .isEqualTo(BigInteger.valueOf(tally.validMain() + tally.validTail()));
        assertThat(summary.at("/sets/campaign_slot/window_ms").asLong()).isEqualTo(300_000);
    }

    static Key key(WindowKey k) {
        return new Key(k.windowStartMillis(), k.dimensions());
    }

    static List<BigInteger> values(AttributionMetrics m) {
        List<BigInteger> out = new ArrayList<>();
        for (int i = 0; i < AttributionMetrics.COLUMNS.length; i++) out.add(m.get(i));
        return out;
    }

    static boolean isUtf8(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }
}
