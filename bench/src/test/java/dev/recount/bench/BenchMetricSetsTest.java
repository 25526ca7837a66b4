package dev.recount.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The definitions bench/run.sh's sets section runs ("1a", "3", "10"): the sets each is said to hold, on the demo's
 * attributes (the generator draws the topic's values from them, so a record one configuration counts is one every
 * configuration counts), with the demo's sets as they are in the demo.
 */
class BenchMetricSetsTest {
    /** The tests run in bench/; the repository is its parent. */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    private static final MetricSets DEMO = load("config/demo/metric-sets.yaml");
    private static final MetricSets ONE = load("bench/metric-sets/one-with-attributes.yaml");
    private static final MetricSets TEN = load("bench/metric-sets/ten.yaml");

    @Test
    void eachConfigurationHoldsTheSetsItIsNamedFor() {
        assertThat(ONE.sets()).extracting(MetricSet::name).containsExactly(MetricSet.DEFAULT);
        assertThat(DEMO.sets()).hasSize(3);
        assertThat(TEN.sets()).hasSize(10);
        assertThat(TEN.defaultSet()).isPresent();
    }

    @Test
    void everyConfigurationDeclaresTheDemosAttributes() {
        // Where each file declares them (their line) aside.
        assertThat(ONE.attributes())
                .usingRecursiveFieldByFieldElementComparatorIgnoringFields("line")
                .containsExactlyElementsOf(DEMO.attributes());
        assertThat(TEN.attributes())
                .usingRecursiveFieldByFieldElementComparatorIgnoringFields("line")
                .containsExactlyElementsOf(DEMO.attributes());
    }

    @Test
    void theTenSetsHoldTheDemosAsTheDemoDefinesThem() {
        for (MetricSet demo : DEMO.sets()) {
            MetricSet ten = TEN.set(demo.name()).orElseThrow();
            assertThat(ten.fingerprint()).isEqualTo(demo.fingerprint());
            assertThat(ten.window()).isEqualTo(demo.window());
        }
    }

    @Test
    void theTenSetsCoverEveryGeneratedFieldBothWindowSizesAndFilteredMeasures() {
        Set<String> dimensions = new TreeSet<>();
        Set<Duration> windows = new TreeSet<>();
        long filteredSums = 0;
        for (MetricSet s : TEN.sets()) {
            dimensions.addAll(s.dimensionNames());
            windows.add(s.window());
            for (Measure m : s.measures()) if (!m.isCount() && !m.filters().isEmpty()) filteredSums++;
        }
        assertThat(dimensions)
                .containsExactlyInAnyOrder("campaign_id", "channel_id", "slot_id", "country", "device", "event_type");
        assertThat(windows).containsExactly(Duration.ofMinutes(1), Duration.ofMinutes(5));
        assertThat(filteredSums).isPositive();
    }

    private static MetricSets load(String file) {
        try {
            return MetricSets.parse(Files.readString(ROOT.resolve(file)), file, RecountConfig.defaults());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
