package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.MetricSet;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ThreeSets;
import org.junit.jupiter.api.Test;

/** How the report names a set's parts: one rule each, which gives the default set the words it always had. */
class LabelsTest {
    @Test
    void theDefaultSetReadsAsItAlwaysDid() {
        MetricSet d = DefaultSet.SET;
        assertThat(d.measures())
                .extracting(Labels::label)
                .containsExactly("Impressions", "Clicks", "Conversions", "Spend", "Events");
        assertThat(Labels.lead(d)).isEqualTo(DefaultSet.SPEND);
        assertThat(Labels.dimensionWords(d)).isEqualTo("campaign, channel");
        assertThat(Labels.dayGroup(d)).isEqualTo("campaign-day");
        assertThat(Labels.ratioTitle(Labels.shownRatio(d))).isEqualTo("Click-through rate (CTR)");
        assertThat(Labels.isPercentage(d, d.ratios().get(0))).isTrue();
        assertThat(Labels.isPercentage(d, d.ratios().get(3)))
                .as("cpm: money per 1000 impressions")
                .isFalse();
        assertThat(Labels.idPrefix(d)).isEmpty();
    }

    @Test
    void anotherSetIsNamedFromItsOwnDefinition() {
        MetricSet c = ThreeSets.COUNTRY;
        assertThat(c.measures()).extracting(Labels::label).containsExactly("Eu clicks", "Spend", "Units", "Events");
        assertThat(c.measures()).extracting(Labels::isMoney).containsExactly(false, true, false, false);
        assertThat(Labels.lead(c)).as("money before any other sum").isEqualTo(1);
        assertThat(Labels.dayGroup(c)).isEqualTo("channel-day");
        assertThat(Labels.shownRatio(c)).isNull();
        assertThat(Labels.idPrefix(c)).isEqualTo("channel_country-");
        assertThat(Labels.title("slot_id")).isEqualTo("Slot");
        assertThat(Labels.plural("country")).isEqualTo("countries");
        assertThat(Labels.plural("campaign")).isEqualTo("campaigns");
        assertThat(Labels.plural("day")).isEqualTo("days");
        assertThat(Labels.singular("impressions")).isEqualTo("impression");
    }
}
