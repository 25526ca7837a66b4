package dev.recount.tools.generate;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.OracleSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The oracle of a configuration: the same settings and the same metric-sets file the pipeline runs with, handed over
 * as values and text, so that the oracle reads them with its own code.
 */
public final class TruthOracle {
    private TruthOracle() {}

    public static OracleSettings settings(RecountConfig config) {
        return new OracleSettings(
                config.eventTime().windowSize(),
                config.attribution().enabled(),
                config.attribution().window(),
                config.validation().maxPast(),
                config.validation().maxFuture(),
                config.validation().maxCostMicros());
    }

    /** An oracle of the metric sets {@code config} names ({@code metric-sets.file}; empty: the default set only). */
    public static Oracle of(RecountConfig config) throws IOException {
        OracleSettings settings = settings(config);
        String file = config.get(MetricSets.FILE_SETTING);
        Definitions definitions = file.isBlank()
                ? Definitions.defaultOnly(settings)
                : Definitions.parse(Files.readString(Path.of(file), StandardCharsets.UTF_8), settings);
        return new Oracle(definitions, settings);
    }
}
