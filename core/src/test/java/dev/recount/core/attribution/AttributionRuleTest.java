package dev.recount.core.attribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.AttributionSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AttributionRuleTest {
    private static final long T0 = Instant.parse("2026-03-01T10:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;
    private static final long WINDOW = 30 * MINUTE;
    private static final AttributionRule RULE = new AttributionRule(WINDOW);
    private static final WindowAlignment WINDOWS = new WindowAlignment(MINUTE);

    private static AdEvent event(String id, EventType type, long ts, String requestId, long cost) {
        return new AdEvent(id, type, ts, "cmp-1", "web", cost, requestId, "t", 0, 0, ts);
    }

    private static AdEvent impression(String id, long ts, String requestId) {
        return event(id, EventType.IMPRESSION, ts, requestId, 3_000);
    }

    private static AdEvent click(String id, long ts, String requestId) {
        return event(id, EventType.CLICK, ts, requestId, 500_000);
    }

    @Test
    void bothBoundsOfTheWindowAreInclusive() {
        assertThat(RULE.attributes(T0, T0)).as("same millisecond").isTrue();
        assertThat(RULE.attributes(T0, T0 + WINDOW))
                .as("exactly one window later")
                .isTrue();
        assertThat(RULE.attributes(T0, T0 + WINDOW + 1))
                .as("one millisecond beyond")
                .isFalse();
        assertThat(RULE.attributes(T0, T0 - 1))
                .as("click before its impression")
                .isFalse();
    }

    @Test
    void theRuleNeedsTheSameRequestIdAndAClickOrConversion() {
        AdEvent imp = impression("i1", T0, "r1");
        assertThat(RULE.attributes(imp, click("c1", T0 + MINUTE, "r1"))).isTrue();
        assertThat(RULE.attributes(imp, click("c1", T0 + MINUTE, "r2"))).isFalse();
        assertThat(RULE.attributes(imp, click("c1", T0 + MINUTE, null))).isFalse();
        assertThat(RULE.attributes(imp, event("v1", EventType.CONVERSION, T0 + MINUTE, "r1", 9)))
                .isTrue();
        assertThat(RULE.attributes(imp, impression("i2", T0 + MINUTE, "r1"))).isFalse();
        assertThat(RULE.attributes(impression("i0", T0, null), click("c1", T0, null)))
                .isFalse();
    }

    @Test
    void theSqlConditionIsTheSameRule() {
        assertThat(RULE.sqlCondition("i.ts", "c.ts")).isEqualTo("i.ts BETWEEN c.ts - 1800000 AND c.ts");
        assertThat(RULE.earliestImpressionTs(T0 + WINDOW)).isEqualTo(T0);
        assertThat(RULE.latestClickTs(T0)).isEqualTo(T0 + WINDOW);
    }

    @Test
    void theFirstImpressionInTheWindowIsTheOne() {
        Attribution a = new Attribution(RULE)
                .add(impression("i-b", T0 + MINUTE, "r1"))
                .add(impression("i-a", T0 + MINUTE, "r1"))
                .add(impression("i-0", T0 - WINDOW, "r1")); // too early for the click below
        AdEvent c = click("c1", T0 + 2 * MINUTE, "r1");
        assertThat(a.impressionOf(c)).map(e -> e.eventId).contains("i-a");
        assertThat(AttributionRule.precedes(T0, "z", T0 + 1, "a")).isTrue();
        assertThat(AttributionRule.precedes(T0, "a", T0, "b")).isTrue();
        assertThat(AttributionRule.precedes(T0, "b", T0, "a")).isFalse();
    }

    @Test
    void metricsPerWindowOfTheClick() {
        Attribution a = new Attribution(RULE)
                .add(impression("i1", T0, "r1"))
                .add(impression("i1", T0, "r1")) // duplicate send: once
                .add(impression("i2", T0 + 5 * MINUTE, "r1")) // second impression of the request: a click counts once
                .add(click("c1", T0 + 10 * MINUTE, "r1"))
                .add(click("c1", T0 + 10 * MINUTE, "r1")) // duplicate send: once
                .add(click("c2", T0 + WINDOW, "r1")) // exactly at the bound (i1), and i2 is in its window too
                .add(click("c3", T0 - 1, "r1")) // before its impression
                .add(click("c4", T0 + 10 * MINUTE, null)) // no request id
                .add(click("c5", T0 + 10 * MINUTE, "nobody")) // no such impression
                .add(event("v1", EventType.CONVERSION, T0 + 10 * MINUTE, "r1", 7_000_000))
                .add(event("v2", EventType.CONVERSION, T0 + 10 * MINUTE, null, 7_000_000)); // not counted

        Map<WindowKey, AttributionMetrics> m = a.perWindow(
                dev.recount.core.sets.MetricSets.defaults().defaultSet().orElseThrow());
        long w10 = T0 + 10 * MINUTE;
        assertThat(m)
                .containsOnlyKeys(
                        WindowKey.of(w10, "cmp-1", "web"),
                        WindowKey.of(T0 + WINDOW, "cmp-1", "web"),
                        WindowKey.of(T0 - MINUTE, "cmp-1", "web"));
        assertThat(m.get(WindowKey.of(w10, "cmp-1", "web"))).isEqualTo(new AttributionMetrics(1, 1, 2, 7_500_000));
        assertThat(m.get(WindowKey.of(T0 + WINDOW, "cmp-1", "web")))
                .isEqualTo(new AttributionMetrics(1, 0, 0, 500_000));
        assertThat(m.get(WindowKey.of(T0 - MINUTE, "cmp-1", "web"))).isEqualTo(new AttributionMetrics(0, 0, 1, 0));
    }

    @Test
    void anAccumulatorTakesALaterAttributionAsADeltaAndKeepsSpendExact() {
        AdEvent c = click("c1", T0, "r1");
        c.costMicros = Long.MAX_VALUE;
        AttributionAccumulator sum = new AttributionAccumulator().decided(c, false);
        AttributionAccumulator delta = new AttributionAccumulator().attributedLater(c);
        assertThat(delta.toMetrics()).isEqualTo(new AttributionMetrics(1, 0, -1, Long.MAX_VALUE));
        sum.merge(delta).merge(new AttributionAccumulator().decided(c, true));
        assertThat(sum.toMetrics())
                .isEqualTo(new AttributionMetrics(
                        2, 0, 0, java.math.BigInteger.valueOf(Long.MAX_VALUE).multiply(java.math.BigInteger.TWO)));
        assertThatThrownBy(() -> new AttributionAccumulator().decided(impression("i", T0, "r"), true))
                .hasMessageContaining("only clicks and conversions");
    }

    @Test
    void settingsComeFromTheConfigWithTheirDefaults() {
        AttributionSettings s = RecountConfig.defaults().attribution();
        assertThat(s.window()).isEqualTo(Duration.ofMinutes(30));
        assertThat(s.enabled()).isFalse();
        assertThat(s.rule()).isEqualTo(new AttributionRule(WINDOW));
        assertThat(RecountConfig.defaults()
                        .with("attribution.enabled", "true")
                        .with("attribution.window", "5m")
                        .attribution())
                .isEqualTo(new AttributionSettings(true, Duration.ofMinutes(5)));
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("attribution.window", "0s")
                        .attribution())
                .hasMessageContaining("attribution.window")
                .hasMessageContaining("positive");
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("attribution.enabled", "yes")
                        .attribution())
                .hasMessageContaining("attribution.enabled");
    }
}
