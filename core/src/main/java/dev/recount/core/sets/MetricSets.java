package dev.recount.core.sets;

import dev.recount.core.config.ConfigException;
import dev.recount.core.config.RecountConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What recount counts: the declared event {@link Attribute}s and the {@link MetricSet}s, read from the definitions
 * file the setting {@code metric-sets.file} names (YAML, checked against {@code metric-sets.schema.json}), or, when
 * it is empty, from the definitions built into this version ({@code config/metric-sets.yaml}: the default set only).
 * Every command that computes or serves metrics loads them at start; a bad file stops it with exit 2 before anything
 * is started or written ({@link DefinitionException}).
 */
public final class MetricSets implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The setting naming the definitions file. */
    public static final String FILE_SETTING = "metric-sets.file";
    /** The definitions used when {@link #FILE_SETTING} is empty: the repository's config/metric-sets.yaml. */
    static final String BUILT_IN_RESOURCE = "/dev/recount/core/config/metric-sets.yaml";
    /** The full definition of {@link MetricSet#DEFAULT}, which a file's {@code - name: default} stands for. */
    static final String DEFAULT_SET_RESOURCE = "/dev/recount/core/sets/default-set.yaml";

    private final String source;
    private final EventFields fields;
    private final List<MetricSet> sets;

    MetricSets(String source, EventFields fields, List<MetricSet> sets) {
        this.source = Objects.requireNonNull(source, "source");
        this.fields = Objects.requireNonNull(fields, "fields");
        this.sets = List.copyOf(sets);
    }

    /** The definitions {@code config} names ({@link #FILE_SETTING}), resolved with its settings. */
    public static MetricSets fromConfig(RecountConfig config) {
        DefinitionsFile.Resolution resolution = resolution(config);
        String file = config.get(FILE_SETTING);
        if (file.isBlank()) return parse(resource(BUILT_IN_RESOURCE), "built-in config/metric-sets.yaml", resolution);
        Path path = Path.of(file);
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("setting " + FILE_SETTING + ": no such file " + path.toAbsolutePath());
        } catch (IOException e) {
            throw new ConfigException("setting " + FILE_SETTING + ": cannot read " + path + ": " + e.getMessage(), e);
        }
        return parse(text, file, resolution);
    }

    /** The built-in definitions with the documented defaults: the default set only. */
    public static MetricSets defaults() {
        return fromConfig(RecountConfig.defaults());
    }

    /** Definitions from {@code text}, resolved with {@code config}'s settings; {@code source} names it in messages. */
    public static MetricSets parse(String text, String source, RecountConfig config) {
        return parse(text, source, resolution(config));
    }

    static MetricSets parse(String text, String source, DefinitionsFile.Resolution resolution) {
        return DefinitionsFile.parse(text, source, resolution, referenceDefault(resolution));
    }

    private static MetricSet referenceDefault(DefinitionsFile.Resolution resolution) {
        MetricSets reference =
                DefinitionsFile.parse(resource(DEFAULT_SET_RESOURCE), "built-in default-set.yaml", resolution, null);
        return reference.set(MetricSet.DEFAULT).orElseThrow();
    }

    private static DefinitionsFile.Resolution resolution(RecountConfig config) {
        Map<String, Tolerance> tolerances = new LinkedHashMap<>();
        for (String measure : List.of("impressions", "clicks", "conversions", "spend_micros", "events")) {
            tolerances.put(measure, toleranceSetting(config, measure));
        }
        return new DefinitionsFile.Resolution(
                config.duration("window.size"), config.attribution().enabled(), tolerances);
    }

    /** {@code reconcile.tolerance.<measure>.relative} / {@code .absolute}: the default set's tolerances. */
    private static Tolerance toleranceSetting(RecountConfig config, String measure) {
        String relKey = "reconcile.tolerance." + measure + ".relative";
        String absKey = "reconcile.tolerance." + measure + ".absolute";
        BigDecimal relative;
        long absolute;
        try {
            relative = new BigDecimal(config.get(relKey));
        } catch (NumberFormatException e) {
            throw new ConfigException(
                    "setting " + relKey + " must be a decimal number, got '" + config.get(relKey) + "'", e);
        }
        try {
            absolute = Long.parseLong(config.get(absKey));
        } catch (NumberFormatException e) {
            throw new ConfigException(
                    "setting " + absKey + " must be a whole number, got '" + config.get(absKey) + "'", e);
        }
        try {
            return new Tolerance(relative, absolute);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("setting reconcile.tolerance." + measure + ": " + e.getMessage(), e);
        }
    }

    private static String resource(String name) {
        try (InputStream in = MetricSets.class.getResourceAsStream(name)) {
            Objects.requireNonNull(in, "missing from the build: " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The file the definitions came from, as given (or "built-in ..."). */
    public String source() {
        return source;
    }

    /** The fields sets can name: the contract's and the declared attributes. */
    public EventFields fields() {
        return fields;
    }

    public List<Attribute> attributes() {
        return fields.attributes();
    }

    /** Every set, in the file's order. */
    public List<MetricSet> sets() {
        return sets;
    }

    public Optional<MetricSet> set(String name) {
        return sets.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** The default set, if the definitions keep it. */
    public Optional<MetricSet> defaultSet() {
        return set(MetricSet.DEFAULT);
    }

    /**
     * These definitions with only the set {@code name} (a command's {@code --set NAME}).
     *
     * @throws ConfigException naming the sets there are when there is none of that name
     */
    public MetricSets only(String name) {
        MetricSet set = set(name)
                .orElseThrow(() -> new ConfigException("no metric set named '" + name + "' in " + source
                        + "; its sets are " + sets.stream().map(MetricSet::name).toList()));
        return new MetricSets(source, fields, List.of(set));
    }

    /** The longest window of any set (the de-dup horizon must cover it); null without sets. */
    public Duration longestWindow() {
        return sets.stream().map(MetricSet::window).max(Duration::compareTo).orElse(null);
    }

    @Override
    public String toString() {
        return "MetricSets{" + source + ": "
                + sets.stream().map(MetricSet::name).toList() + '}';
    }
}
