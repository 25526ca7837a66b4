package dev.recount.core.sets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A set's per-event maths: filters, exact sums past 2^64, merging, and reading values back. */
class MetricSetMathsTest {
    private static final long T0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    private static final MetricSets DEFS =
            MetricSets.parse(MetricSetsTest.THREE_SETS, "sets.yaml", RecountConfig.defaults());
    private static final MetricSet DEFAULT = DEFS.defaultSet().orElseThrow();
    private static final MetricSet SLOT = DEFS.set("campaign_slot").orElseThrow();
    private static final MetricSet COUNTRY = DEFS.set("channel_country").orElseThrow();

    /** An event with the three-set file's attributes: slot_id, country (strings), quantity (integer). */
    private static AdEvent event(String id, EventType type, long cost, String slot, String country, long quantity) {
        return new AdEvent(id, type, T0 + 1_000, "cmp-1", "ch-1", cost, "ad-events", 0, 0, T0 + 1_000)
                .withAttributes(new String[] {slot, country}, new long[] {quantity}, null);
    }

    @Test
    void theDefaultSetCountsByTypeAndSumsSpendOverAllTypes() {
        MeasureSums sums = DEFAULT.newSums();
        DEFAULT.add(sums, event("e1", EventType.IMPRESSION, 10, "s1", "DE", 0));
        DEFAULT.add(sums, event("e2", EventType.CLICK, 20, "s1", "DE", 0));
        DEFAULT.add(sums, event("e3", EventType.CONVERSION, 30, "s1", "DE", 0));
        DEFAULT.add(sums, event("e4", EventType.CLICK, 0, "s1", "DE", 0));

        // impressions, clicks, conversions, spend_micros, events
        assertThat(DEFAULT.values(sums)).isEqualTo(MeasureValues.of(1, 2, 1, 60, 4));
    }

    @Test
    void filtersOnAttributesAndSumsOfIntegerAttributes() {
        MeasureSums sums = COUNTRY.newSums();
        COUNTRY.add(sums, event("e1", EventType.CLICK, 1, "s1", "DE", 3));
        COUNTRY.add(sums, event("e2", EventType.CLICK, 1, "s1", "US", 4));
        COUNTRY.add(sums, event("e3", EventType.IMPRESSION, 1, "s1", "FR", 5));
        COUNTRY.add(sums, event("e4", EventType.CLICK, 1, "s1", "FR", 0));

        // eu_clicks (clicks in DE or FR), units (sum of quantity), events
        assertThat(COUNTRY.values(sums)).isEqualTo(MeasureValues.of(2, 12, 4));
        assertThat(COUNTRY.dimensionValues(event("e5", EventType.CLICK, 1, "s9", "US", 0)))
                .containsExactly("ch-1", "US");
        assertThat(SLOT.dimensionValues(event("e5", EventType.CLICK, 1, "s9", "US", 0)))
                .containsExactly("cmp-1", "s9");
    }

    @Test
    void sumsStayExactPastTwoToTheSixtyFourAndMergeWithTheirCarries() {
        long max = Long.MAX_VALUE;
        MeasureSums a = SLOT.newSums();
        MeasureSums b = SLOT.newSums();
        for (int i = 0; i < 3; i++) SLOT.add(a, event("a" + i, EventType.CLICK, max, "s", "DE", 0));
        for (int i = 0; i < 5; i++) SLOT.add(b, event("b" + i, EventType.CLICK, max, "s", "DE", 0));

        BigInteger eight = BigInteger.valueOf(max).multiply(BigInteger.valueOf(8));
        MeasureValues merged = SLOT.values(SLOT.merge(a, b));
        assertThat(merged.get(SLOT.measureIndex("spend_micros"))).isEqualTo(eight);
        assertThat(merged.count(SLOT.measureIndex("clicks"))).isEqualTo(8);
        // and back: an accumulator of those values adds on exactly
        MeasureSums again = SLOT.sumsOf(merged);
        SLOT.add(again, event("c", EventType.CLICK, max, "s", "DE", 0));
        assertThat(SLOT.values(again).get(SLOT.measureIndex("spend_micros")))
                .isEqualTo(eight.add(BigInteger.valueOf(max)));
    }

    @Test
    void ratiosAreRatiosOfTheSumsRoundedHalfUpOrNullWithoutADenominator() {
        MeasureValues v = MeasureValues.of(3, 1, 0, 2_000, 4); // impressions, clicks, conversions, spend, events
        assertThat(DEFAULT.ratio(DEFAULT.ratios().get(0), v)).isEqualByComparingTo(new BigDecimal("0.333333333333"));
        assertThat(DEFAULT.ratio(DEFAULT.ratios().get(3), v)) // cpm: spend * 1000 / impressions
                .isEqualByComparingTo(new BigDecimal("666666.666666666667"));
        assertThat(DEFAULT.ratio(DEFAULT.ratios().get(4), v)).isNull(); // no conversions
    }

    @Test
    void valuesOfAnotherSetAreRefused() {
        assertThatThrownBy(() -> SLOT.sumsOf(MeasureValues.of(1, 2)))
                .hasMessage("set campaign_slot has 4 measures, got 2 values");
    }

    @Test
    void sqlContributionIsTheSameRuleWithTheEnginesQuoting() {
        Measure euClicks = COUNTRY.measures().get(0);
        assertThat(euClicks.sqlContribution(c -> "`" + c + "`", v -> "'" + v + "'", "BIGINT"))
                .isEqualTo("CASE WHEN `event_type` IN ('click') AND `country` IN ('DE', 'FR') THEN CAST(1 AS BIGINT)"
                        + " ELSE CAST(0 AS BIGINT) END");
        assertThat(COUNTRY.measures().get(1).sqlContribution(c -> c, v -> v, "BIGINT"))
                .isEqualTo("CAST(quantity AS BIGINT)");
    }
}
