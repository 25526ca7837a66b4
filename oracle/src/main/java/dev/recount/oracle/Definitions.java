package dev.recount.oracle;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A metric-sets file as the oracle reads it: the declared attributes and the sets, each with its dimensions, measures,
 * window and attribution. Ratios, rollups and tolerances change no sum, so they are not read. The file is taken as
 * valid (recount refuses a bad one before anything runs); what the oracle cannot read is an exception.
 *
 * <p>The default set ({@code - name: default}) is the contract's own (docs/contract.md §3): per campaign and channel,
 * impressions, clicks and conversions (events of that type), spend_micros (the sum of cost_micros) and events.
 */
public final class Definitions {
    /** An event field beyond the contract's, declared so that sets can use it. */
    public record Attribute(String name, boolean isString, boolean required, Object defaultValue, Set<String> values) {}

    /**
     * A count of events, or the exact sum of an integer field, over the events whose string fields hold one of the
     * listed values, for every field {@code where} names.
     */
    public record Measure(String name, String sumOf, Map<String, Set<String>> where) {
        public Measure {
            where = Map.copyOf(where);
        }

        public boolean isSum() {
            return sumOf != null;
        }
    }

    /**
     * One metric set. {@code measures} ends with {@link #EVENTS}, the count of every event of a key, unless the file
     * declares it somewhere else.
     */
    public record MetricSet(
            String name, List<String> dimensions, List<Measure> measures, long windowMillis, boolean attribution) {
        public MetricSet {
            dimensions = List.copyOf(dimensions);
            measures = List.copyOf(measures);
        }

        public List<String> measureNames() {
            return measures.stream().map(Measure::name).toList();
        }
    }

    public static final String DEFAULT = "default";
    public static final String EVENTS = "events";

    private final Map<String, Attribute> attributes;
    private final List<MetricSet> sets;

    private Definitions(Map<String, Attribute> attributes, List<MetricSet> sets) {
        this.attributes = attributes;
        this.sets = List.copyOf(sets);
    }

    /** What recount counts without a metric-sets file: the default set alone, no attributes. */
    public static Definitions defaultOnly(OracleSettings settings) {
        return new Definitions(Map.of(), List.of(defaultSet(settings.window().toMillis(), settings.attribution())));
    }

    /** The definitions of a metric-sets file's text; a set's window and attribution default to {@code settings}. */
    @SuppressWarnings("unchecked")
    public static Definitions parse(String yamlText, OracleSettings settings) {
        Map<String, Object> root =
                (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(yamlText);
        Map<String, Attribute> attributes = new LinkedHashMap<>();
        Map<String, Object> declared = (Map<String, Object>) root.get("attributes");
        if (declared != null) {
            declared.forEach((name, spec) -> attributes.put(name, attribute(name, (Map<String, Object>) spec)));
        }
        List<MetricSet> sets = new ArrayList<>();
        for (Object entry : (List<Object>) root.get("sets")) {
            Map<String, Object> s = (Map<String, Object>) entry;
            String name = (String) s.get("name");
            long window = s.containsKey("window")
                    ? OracleSettings.duration(String.valueOf(s.get("window"))).toMillis()
                    : settings.window().toMillis();
            boolean attribution =
                    s.containsKey("attribution") ? (Boolean) s.get("attribution") : settings.attribution();
            if (name.equals(DEFAULT)) {
                sets.add(defaultSet(window, attribution));
                continue;
            }
            List<Measure> measures = new ArrayList<>();
            for (Object m : (List<Object>) s.get("measures")) measures.add(measure((Map<String, Object>) m));
            if (measures.stream().noneMatch(m -> m.name().equals(EVENTS))) measures.add(count(EVENTS, Map.of()));
            sets.add(new MetricSet(name, (List<String>) s.get("dimensions"), measures, window, attribution));
        }
        return new Definitions(attributes, sets);
    }

    private static MetricSet defaultSet(long windowMillis, boolean attribution) {
        return new MetricSet(
                DEFAULT,
                List.of("campaign_id", "channel_id"),
                List.of(
                        count("impressions", Map.of("event_type", Set.of("impression"))),
                        count("clicks", Map.of("event_type", Set.of("click"))),
                        count("conversions", Map.of("event_type", Set.of("conversion"))),
                        new Measure("spend_micros", "cost_micros", Map.of()),
                        count(EVENTS, Map.of())),
                windowMillis,
                attribution);
    }

    private static Measure count(String name, Map<String, Set<String>> where) {
        return new Measure(name, null, where);
    }

    @SuppressWarnings("unchecked")
    private static Measure measure(Map<String, Object> m) {
        Map<String, Set<String>> where = new LinkedHashMap<>();
        Map<String, Object> conditions = (Map<String, Object>) m.get("where");
        if (conditions != null) {
            conditions.forEach((field, accepted) -> where.put(
                    field, accepted instanceof List<?> list ? strings(list) : Set.of(String.valueOf(accepted))));
        }
        boolean sum = "sum".equals(m.get("kind"));
        return new Measure((String) m.get("name"), sum ? (String) m.get("field") : null, where);
    }

    private static Attribute attribute(String name, Map<String, Object> spec) {
        boolean isString = "string".equals(spec.get("type"));
        Object defaultValue = spec.get("default");
        if (defaultValue != null && !isString) defaultValue = ((Number) defaultValue).longValue();
        List<?> values = (List<?>) spec.get("values");
        return new Attribute(
                name,
                isString,
                Boolean.TRUE.equals(spec.get("required")),
                defaultValue,
                values == null ? Set.of() : strings(values));
    }

    private static Set<String> strings(List<?> values) {
        Set<String> out = new LinkedHashSet<>();
        for (Object v : values) out.add(String.valueOf(v));
        return out;
    }

    public Map<String, Attribute> attributes() {
        return attributes;
    }

    public List<MetricSet> sets() {
        return sets;
    }

    public MetricSet set(String name) {
        return sets.stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no set " + name + " in " + names()));
    }

    public List<String> names() {
        return sets.stream().map(MetricSet::name).toList();
    }

    /** Whether any set computes attribution (else the oracle keeps no impressions). */
    public boolean anyAttribution() {
        return sets.stream().anyMatch(MetricSet::attribution);
    }

    @Override
    public String toString() {
        return "Definitions" + names() + (attributes.isEmpty() ? "" : " with attributes " + attributes.keySet());
    }
}
