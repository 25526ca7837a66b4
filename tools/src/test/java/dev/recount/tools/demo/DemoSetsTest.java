package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.OracleSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The demo's metric sets as recount reads them, and the oracle reading every sets file the checks use (the demo's and
 * the golden file's) as recount does: same sets, dimensions, measures, windows and attribution. Were the two readings
 * to differ, the demo would compare the pipeline with the truth of other sets.
 */
class DemoSetsTest {
    static final Path DEMO = Path.of("..", DemoWorkspace.METRIC_SETS);
    static final Path GOLDEN = Path.of("../oracle/src/test/resources/golden/metric-sets.yaml");

    @Test
    void declaresTheDefaultSetAndTwoMoreWithTheirOwnWindowsAndAttribution() throws Exception {
        RecountConfig demo = RecountConfig.defaults()
                .with("attribution.enabled", "true")
                .with("attribution.window", DemoWorkspace.ATTRIBUTION_WINDOW);
        MetricSets sets = MetricSets.parse(Files.readString(DEMO), DEMO.toString(), demo);

        assertThat(sets.sets())
                .extracting(MetricSet::name)
                .containsExactly("default", "campaign_slot", "channel_country");
        assertThat(sets.attributes()).extracting(a -> a.name()).containsExactly("slot_id", "country", "device");
        MetricSet slot = sets.set("campaign_slot").orElseThrow();
        assertThat(slot.dimensionNames()).containsExactly("campaign_id", "slot_id");
        assertThat(slot.window()).isEqualTo(Duration.ofMinutes(5));
        assertThat(slot.attribution()).isFalse();
        MetricSet country = sets.set("channel_country").orElseThrow();
        assertThat(country.dimensionNames()).containsExactly("channel_id", "country");
        assertThat(country.window()).isEqualTo(Duration.ofMinutes(1));
        assertThat(country.attribution()).isTrue();
        assertThat(sets.longestWindow()).isEqualTo(Duration.ofMinutes(5));
    }

    static Stream<Path> files() {
        return Stream.of(DEMO, GOLDEN);
    }

    @ParameterizedTest
    @MethodSource("files")
    void theOracleReadsTheSetsAsRecountDoes(Path file) throws Exception {
        String text = Files.readString(file);
        for (boolean attribution : List.of(false, true)) {
            RecountConfig config = RecountConfig.defaults().with("attribution.enabled", Boolean.toString(attribution));
            MetricSets recount = MetricSets.parse(text, file.toString(), config);
            OracleSettings settings = new OracleSettings(
                    config.eventTime().windowSize(),
                    attribution,
                    config.attribution().window(),
                    config.validation().maxPast(),
                    config.validation().maxFuture(),
                    config.validation().maxCostMicros());
            Definitions oracle = Definitions.parse(text, settings);

            assertThat(oracle.names())
                    .isEqualTo(recount.sets().stream().map(MetricSet::name).toList());
            assertThat(oracle.attributes().keySet())
                    .containsExactlyElementsOf(
                            recount.attributes().stream().map(a -> a.name()).toList());
            for (MetricSet set : recount.sets()) {
                Definitions.MetricSet o = oracle.set(set.name());
                assertThat(o.dimensions()).as(set.name()).isEqualTo(set.dimensionNames());
                assertThat(o.measureNames()).as(set.name()).isEqualTo(set.measureNames());
                assertThat(o.windowMillis())
                        .as(set.name())
                        .isEqualTo(set.window().toMillis());
                assertThat(o.attribution()).as(set.name()).isEqualTo(set.attribution());
            }
        }
    }
}
