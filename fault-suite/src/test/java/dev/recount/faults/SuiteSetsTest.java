package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.oracle.Definitions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The suite's metric-sets file: recount and the oracle read the same three sets from it, and the two-set start. */
class SuiteSetsTest {
    private static final RecountConfig CONFIG = RecountConfig.defaults();

    @Test
    void recountAndTheOracleReadTheSameSetsDimensionsAndMeasures() {
        MetricSets recount = MetricSets.parse(SuiteSets.yaml(), "suite", CONFIG);
        Definitions oracle = Definitions.parse(SuiteSets.yaml(), AccountingFixture.SETTINGS);

        assertThat(recount.sets())
                .extracting(MetricSet::name)
                .containsExactly("default", "campaign_slot", "channel_country");
        assertThat(oracle.names()).containsExactly("default", "campaign_slot", "channel_country");
        for (Definitions.MetricSet o : oracle.sets()) {
            MetricSet r = recount.set(o.name()).orElseThrow();
            assertThat(r.dimensionNames()).as(o.name()).isEqualTo(o.dimensions());
            assertThat(r.measureNames()).as(o.name()).containsExactlyInAnyOrderElementsOf(o.measureNames());
        }
        assertThat(recount.longestWindow()).isEqualTo(Duration.ofMinutes(5));
        assertThat(oracle.set("channel_country").attribution()).isTrue();
        assertThat(oracle.set("campaign_slot").attribution()).isFalse();
        assertThat(recount.attributes()).extracting(a -> a.name()).contains("slot_id", "country", "device", "quantity");
    }

    @Test
    void withoutTheAddedSetRecountReadsTheOtherTwoAsBefore() {
        String two = SuiteSets.without(SuiteSets.ADDED);

        MetricSets before = MetricSets.parse(two, "suite without " + SuiteSets.ADDED, CONFIG);
        MetricSets after = MetricSets.parse(SuiteSets.yaml(), "suite", CONFIG);

        assertThat(before.sets()).extracting(MetricSet::name).containsExactly("default", "campaign_slot");
        for (MetricSet s : before.sets()) {
            // Same definition, so `migrate` keeps the set's tables when the third set is added.
            assertThat(s.fingerprint())
                    .as(s.name())
                    .isEqualTo(after.set(s.name()).orElseThrow().fingerprint());
        }
        assertThat(rules(before)).isEqualTo(rules(after));
        assertThatThrownBy(() -> SuiteSets.without("no_such_set")).isInstanceOf(IllegalArgumentException.class);
    }

    /** The attributes' rules, without where the file declares them. */
    private static List<String> rules(MetricSets sets) {
        return sets.attributes().stream()
                .map(a -> a.name() + " " + a.type() + " " + a.required() + " " + a.defaultValue() + " " + a.values())
                .toList();
    }
}
