package dev.recount.core.sets;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.recount.core.config.Durations;
import dev.recount.core.event.EventType;
import dev.recount.core.event.IdRule;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a metric-set definitions file (YAML, CONTRACT §2 "Metric sets") into {@link MetricSets}: first against its
 * JSON Schema ({@link #SCHEMA_RESOURCE}, which editors can use too), then against the rules a schema cannot state —
 * names that must exist (fields, measures), be unique, be strict SQL identifiers, or be integer fields. The first
 * problem, by line, is a {@link DefinitionException} naming the file, the line and the rule.
 */
final class DefinitionsFile {
    static final String SCHEMA_RESOURCE = "/dev/recount/core/sets/metric-sets.schema.json";

    private static final long DAY_MILLIS = 86_400_000L;
    private static final JsonSchema SCHEMA = loadSchema();

    /** Settings a file may leave to the configuration. */
    record Resolution(Duration window, boolean attribution, Map<String, Tolerance> defaultSetTolerances) {}

    private final String source;
    private final LocatedYaml yaml;
    private final Resolution resolution;
    /** The built-in default set, which a file's {@code default} must match; null while reading that very file. */
    private final MetricSet referenceDefault;

    private DefinitionsFile(String source, LocatedYaml yaml, Resolution resolution, MetricSet referenceDefault) {
        this.source = source;
        this.yaml = yaml;
        this.resolution = resolution;
        this.referenceDefault = referenceDefault;
    }

    /**
     * @param referenceDefault the built-in default set a {@code default} entry refers to; null when reading the
     *                         built-in definition itself (which declares it in full)
     */
    static MetricSets parse(String text, String source, Resolution resolution, MetricSet referenceDefault) {
        LocatedYaml yaml = LocatedYaml.read(text, source);
        DefinitionsFile file = new DefinitionsFile(source, yaml, resolution, referenceDefault);
        file.checkSchema();
        return file.build();
    }

    // ---- the schema -----------------------------------------------------------------------------------------------

    private static JsonSchema loadSchema() {
        try (InputStream in = DefinitionsFile.class.getResourceAsStream(SCHEMA_RESOURCE)) {
            Objects.requireNonNull(in, "schema missing from the build: " + SCHEMA_RESOURCE);
            return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V7).getSchema(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void checkSchema() {
        checkAttributesHaveRequiredOrDefault();
        Set<ValidationMessage> errors = SCHEMA.validate(yaml.root);
        if (errors.isEmpty()) return;
        // The most specific problem first (a wrong measure, not "the set matched no branch"), then the earliest line.
        ValidationMessage first = errors.stream()
                .min(Comparator.comparingInt((ValidationMessage m) -> isCombinator(m.getType()) ? 1 : 0)
                        .thenComparingInt(m -> yaml.lineOf(pointer(path(m))))
                        .thenComparing(ValidationMessage::getMessage))
                .orElseThrow();
        String path = path(first);
        String pointer = pointer(path);
        int line = yaml.lineOf(pointer);
        if ("propertyNames".equals(first.getType())) {
            String key = pointer.substring(pointer.lastIndexOf('/') + 1)
                    .replace("~1", "/")
                    .replace("~0", "~");
            String problem = Identifiers.problem(key, Identifiers.MAX_COLUMN_NAME);
            if (problem != null) throw new DefinitionException(source, line, where(pointer) + ": " + problem);
        }
        if ("pattern".equals(first.getType()) || "maxLength".equals(first.getType())) {
            JsonNode value = yaml.root.at(pointer);
            if (value.isTextual()) {
                String problem =
                        pointer.startsWith("/sets/") && pointer.endsWith("/name") && pointer.split("/").length == 4
                                ? Identifiers.setNameProblem(value.textValue())
                                : Identifiers.problem(value.textValue(), Identifiers.MAX_COLUMN_NAME);
                if (problem != null) throw new DefinitionException(source, line, where(pointer) + ": " + problem);
            }
        }
        String message = first.getMessage();
        // networknt starts its messages with the path; the line and where() say that better.
        if (message.startsWith(path + ": ")) message = message.substring(path.length() + 2);
        throw new DefinitionException(
                source, line, where(pointer) + ": " + message + " (schema " + SCHEMA_RESOURCE.substring(1) + ")");
    }

    /**
     * The path a message is about: the one its text starts with (for an unknown key, the key's own path, deeper than
     * {@code getPath()}, which is the object's), else {@code getPath()}.
     */
    private static String path(ValidationMessage m) {
        String text = m.getMessage();
        int colon = text.indexOf(": ");
        if (text.startsWith("$") && colon > 0) return text.substring(0, colon);
        return m.getPath();
    }

    /** The schema's oneOf says this too, but its message would name neither word. */
    private void checkAttributesHaveRequiredOrDefault() {
        JsonNode attributes = yaml.root.path("attributes");
        if (!attributes.isObject()) return;
        for (Iterator<Map.Entry<String, JsonNode>> it = attributes.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode a = e.getValue();
            if (a.isObject() && a.has("required") == a.has("default")) {
                throw problem(
                        "/attributes/" + LocatedYaml.escape(e.getKey()),
                        "an attribute is either `required: true` (absent: a schema dead letter) or has a `default`,"
                                + " not " + (a.has("required") ? "both" : "neither"));
            }
        }
    }

    private static boolean isCombinator(String type) {
        return "oneOf".equals(type)
                || "anyOf".equals(type)
                || "if".equals(type)
                || "then".equals(type)
                || "else".equals(type)
                || "not".equals(type);
    }

    private static final Pattern PATH_PART = Pattern.compile("\\.([^.\\[]+)|\\[(\\d+)]|\\['((?:[^'\\\\]|\\\\.)*)']");

    /** networknt's {@code $.sets[1].measures[0]} as the JSON pointer {@code /sets/1/measures/0}. */
    static String pointer(String path) {
        if (path == null || !path.startsWith("$")) return "";
        StringBuilder out = new StringBuilder();
        Matcher m = PATH_PART.matcher(path);
        int at = 1;
        while (at < path.length() && m.find(at) && m.start() == at) {
            String part = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
            out.append('/').append(LocatedYaml.escape(part));
            at = m.end();
        }
        return out.toString();
    }

    /** A pointer as the messages say it: {@code sets[1].measures[0].kind}. */
    private String where(String pointer) {
        if (pointer.isEmpty()) return "the file";
        StringBuilder b = new StringBuilder();
        for (String part : pointer.substring(1).split("/")) {
            if (part.chars().allMatch(Character::isDigit))
                b.append('[').append(part).append(']');
            else
                b.append(b.length() == 0 ? "" : ".")
                        .append(part.replace("~1", "/").replace("~0", "~"));
        }
        // Name the set rather than its index: "set campaign_slot" reads better than "sets[2]".
        Matcher set = Pattern.compile("^sets\\[(\\d+)]").matcher(b);
        if (set.find()) {
            JsonNode name =
                    yaml.root.path("sets").path(Integer.parseInt(set.group(1))).path("name");
            if (name.isTextual()) return "set " + name.textValue() + b.substring(set.end());
        }
        return b.toString();
    }

    private DefinitionException problem(String pointer, String rule) {
        return new DefinitionException(source, yaml.lineOf(pointer), where(pointer) + ": " + rule);
    }

    // ---- the rules ------------------------------------------------------------------------------------------------

    private MetricSets build() {
        List<Attribute> attributes = attributes();
        EventFields fields = new EventFields(attributes);
        List<MetricSet> sets = new ArrayList<>();
        Set<String> names = new HashSet<>();
        JsonNode setNodes = yaml.root.path("sets");
        for (int i = 0; i < setNodes.size(); i++) {
            String at = "/sets/" + i;
            String name = setNodes.get(i).get("name").textValue();
            String nameProblem = Identifiers.setNameProblem(name);
            if (nameProblem != null) throw problem(at + "/name", nameProblem);
            if (!names.add(name))
                throw problem(at + "/name", "duplicate name: a set named " + name + " is declared above");
            sets.add(set(setNodes.get(i), at, fields));
        }
        return new MetricSets(source, fields, sets);
    }

    private List<Attribute> attributes() {
        List<Attribute> out = new ArrayList<>();
        JsonNode nodes = yaml.root.path("attributes");
        for (Iterator<Map.Entry<String, JsonNode>> it = nodes.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            String at = "/attributes/" + LocatedYaml.escape(name);
            if (EventFields.CONTRACT_FIELDS.contains(name)) {
                throw problem(
                        at,
                        "'" + name + "' is a contract field; attributes are the fields beyond "
                                + EventFields.CONTRACT_FIELDS);
            }
            JsonNode a = e.getValue();
            FieldType type = a.get("type").textValue().equals("string") ? FieldType.STRING : FieldType.INTEGER;
            List<String> values = new ArrayList<>();
            if (a.has("values")) {
                if (type != FieldType.STRING) throw problem(at + "/values", "only a string attribute lists values");
                int i = 0;
                for (JsonNode v : a.get("values")) {
                    String idProblem = IdRule.problem(name, v.textValue());
                    if (idProblem != null)
                        throw problem(at + "/values/" + i, "a value must be a valid id: " + idProblem);
                    values.add(v.textValue());
                    i++;
                }
            }
            String defaultValue = null;
            if (a.has("default")) {
                JsonNode d = a.get("default");
                if (type == FieldType.STRING) {
                    if (!d.isTextual()) throw problem(at + "/default", "the default of a string attribute is a string");
                    String idProblem = IdRule.problem(name, d.textValue());
                    if (idProblem != null)
                        throw problem(at + "/default", "the default must be a valid id: " + idProblem);
                    if (!values.isEmpty() && !values.contains(d.textValue())) {
                        throw problem(at + "/default", "the default '" + d.textValue() + "' is not one of " + values);
                    }
                    defaultValue = d.textValue();
                } else {
                    if (!d.isIntegralNumber() || !d.canConvertToLong() || d.longValue() < 0) {
                        throw problem(
                                at + "/default",
                                "the default of an integer attribute is a whole number in" + " [0, 2^63)");
                    }
                    defaultValue = Long.toString(d.longValue());
                }
            }
            out.add(new Attribute(name, type, a.has("required"), defaultValue, values, yaml.lineOf(at)));
        }
        return out;
    }

    private MetricSet set(JsonNode n, String at, EventFields fields) {
        String name = n.get("name").textValue();
        boolean isDefault = MetricSet.DEFAULT.equals(name);
        MetricSet reference = isDefault ? referenceDefault : null;
        if (reference != null) {
            for (String part : List.of("dimensions", "measures", "ratios", "rollups")) {
                if (n.has(part)) {
                    throw problem(
                            at + "/" + part,
                            "the default set keeps today's tables, so its " + part
                                    + " are built in; name only `- name: default` (with window, attribution or tolerance),"
                                    + " and declare another set for other " + part);
                }
            }
        }
        List<EventField> dims = reference != null ? reference.dimensions() : dimensions(n, at, fields);
        List<Measure> measures = reference != null ? reference.measures() : measures(n, at, fields, dims);
        List<DerivedRatio> ratios = reference != null ? reference.ratios() : ratios(n, at, dims, measures);
        Set<Rollup> rollups = reference != null ? reference.rollups() : rollups(n);
        Duration window = n.has("window") ? window(n.get("window"), at + "/window") : resolution.window();
        boolean attribution = n.has("attribution") ? n.get("attribution").booleanValue() : resolution.attribution();
        Map<String, Tolerance> tolerances = new LinkedHashMap<>();
        if (isDefault) tolerances.putAll(resolution.defaultSetTolerances());
        tolerances.putAll(tolerances(n, at, measures));
        try {
            return new MetricSet(
                    name, dims, measures, ratios, window, rollups, attribution, tolerances, yaml.lineOf(at));
        } catch (IllegalArgumentException e) {
            throw problem(at, e.getMessage());
        }
    }

    private List<EventField> dimensions(JsonNode n, String at, EventFields fields) {
        List<EventField> dims = new ArrayList<>();
        JsonNode nodes = n.get("dimensions");
        for (int i = 0; i < nodes.size(); i++) {
            String p = at + "/dimensions/" + i;
            EventField f = field(nodes.get(i).textValue(), p, fields);
            String problem = f.dimensionProblem();
            if (problem != null) throw problem(p, problem);
            if (dims.contains(f)) throw problem(p, "duplicate name: dimension " + f + " is listed twice");
            checkColumnName(f.name(), p);
            dims.add(f);
        }
        return dims;
    }

    private List<Measure> measures(JsonNode n, String at, EventFields fields, List<EventField> dims) {
        List<Measure> measures = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (EventField d : dims) names.add(d.name());
        JsonNode nodes = n.get("measures");
        for (int i = 0; i < nodes.size(); i++) {
            String p = at + "/measures/" + i;
            JsonNode m = nodes.get(i);
            String name = m.get("name").textValue();
            checkColumnName(name, p + "/name");
            if (!names.add(name)) {
                throw problem(
                        p + "/name", "duplicate name: " + name + " is already a dimension or measure of this set");
            }
            EventField summed = null;
            if (m.get("kind").textValue().equals("sum")) {
                summed = field(m.get("field").textValue(), p + "/field", fields);
                if (summed.type() != FieldType.INTEGER) {
                    throw problem(
                            p + "/field",
                            "a sum over " + summed + ", which is not an integer field: sums add up"
                                    + " cost_micros or integer attributes");
                }
                if (summed.source() == EventField.Source.EVENT_TS) {
                    throw problem(
                            p + "/field",
                            "a sum over event_ts, a time, means nothing: sums add up cost_micros"
                                    + " or integer attributes");
                }
            }
            List<Filter> filters = new ArrayList<>();
            JsonNode where = m.get("where");
            if (where != null) {
                for (Iterator<Map.Entry<String, JsonNode>> it = where.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    String wp = p + "/where/" + LocatedYaml.escape(e.getKey());
                    EventField f = field(e.getKey(), wp, fields);
                    if (f.type() != FieldType.STRING) {
                        throw problem(
                                wp,
                                "a filter on " + f + ", which is not a string field: filters compare"
                                        + " event_type, ids or string attributes with listed values");
                    }
                    List<String> values = new ArrayList<>();
                    if (e.getValue().isTextual()) values.add(e.getValue().textValue());
                    else e.getValue().forEach(v -> values.add(v.textValue()));
                    for (String v : values) filterValue(f, v, wp, fields);
                    filters.add(new Filter(f, values));
                }
            }
            Measure measure = summed == null ? Measure.count(name, filters) : Measure.sum(name, summed, filters);
            if (name.equals(Measure.EVENTS) && !measure.sameDefinition(Measure.count(Measure.EVENTS, List.of()))) {
                throw problem(
                        p,
                        Measure.EVENTS + " is the count of every event of a key, which every set has;"
                                + " give this measure another name");
            }
            measures.add(measure);
        }
        return measures;
    }

    private void filterValue(EventField f, String value, String at, EventFields fields) {
        if (f.source() == EventField.Source.EVENT_TYPE) {
            if (EventType.fromWire(value).isEmpty()) {
                throw problem(at, "event_type '" + value + "' is not one of impression, click, conversion");
            }
            return;
        }
        if (f.isAttribute()) {
            Attribute a = fields.attributes().stream()
                    .filter(x -> x.name().equals(f.name()))
                    .findFirst()
                    .orElseThrow();
            if (!a.values().isEmpty() && !a.values().contains(value)) {
                throw problem(
                        at,
                        "'" + value + "' is not one of the values attribute " + a.name() + " declares, " + a.values()
                                + ": the filter could never match");
            }
        }
        String idProblem = IdRule.problem(f.name(), value);
        if (idProblem != null) throw problem(at, "a filter value must be a valid id: " + idProblem);
    }

    private List<DerivedRatio> ratios(JsonNode n, String at, List<EventField> dims, List<Measure> measures) {
        List<DerivedRatio> ratios = new ArrayList<>();
        if (!n.has("ratios")) return ratios;
        Set<String> names = new HashSet<>();
        for (EventField d : dims) names.add(d.name());
        Set<String> measureNames = new HashSet<>();
        for (Measure m : measures) measureNames.add(m.name());
        measureNames.add(Measure.EVENTS);
        names.addAll(measureNames);
        JsonNode nodes = n.get("ratios");
        for (int i = 0; i < nodes.size(); i++) {
            String p = at + "/ratios/" + i;
            JsonNode r = nodes.get(i);
            String name = r.get("name").textValue();
            checkColumnName(name, p + "/name");
            if (!names.add(name)) {
                throw problem(
                        p + "/name",
                        "duplicate name: " + name + " is already a dimension, measure or ratio of" + " this set");
            }
            for (String side : List.of("numerator", "denominator")) {
                String measure = r.get(side).textValue();
                if (!measureNames.contains(measure)) {
                    throw problem(
                            p + "/" + side,
                            "a ratio over an unknown measure: " + measure + " is not a measure" + " of this set "
                                    + measureNames.stream().sorted().toList());
                }
            }
            long per = r.has("per") ? r.get("per").longValue() : 1;
            ratios.add(new DerivedRatio(
                    name, r.get("numerator").textValue(), r.get("denominator").textValue(), per));
        }
        return ratios;
    }

    private static Set<Rollup> rollups(JsonNode n) {
        if (!n.has("rollups")) return EnumSet.allOf(Rollup.class);
        Set<Rollup> rollups = EnumSet.noneOf(Rollup.class);
        for (JsonNode r : n.get("rollups"))
            rollups.add(Rollup.valueOf(r.textValue().toUpperCase(java.util.Locale.ROOT)));
        return rollups;
    }

    private Duration window(JsonNode node, String at) {
        Duration d;
        try {
            d = Durations.parse(node.asText());
        } catch (IllegalArgumentException e) {
            throw problem(at, e.getMessage());
        }
        long ms = d.toMillis();
        if (ms <= 0 || DAY_MILLIS % ms != 0) {
            throw problem(
                    at,
                    "window " + node.asText() + " must divide a day (e.g. 30s, 1m, 5m, 15m, 1h, 1d), so that"
                            + " the days nightly recomputes hold whole windows");
        }
        return d;
    }

    private Map<String, Tolerance> tolerances(JsonNode n, String at, List<Measure> measures) {
        Map<String, Tolerance> out = new LinkedHashMap<>();
        JsonNode nodes = n.get("tolerance");
        if (nodes == null) return out;
        for (Iterator<Map.Entry<String, JsonNode>> it = nodes.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String p = at + "/tolerance/" + LocatedYaml.escape(e.getKey());
            if (measures.stream().noneMatch(m -> m.name().equals(e.getKey()))
                    && !e.getKey().equals(Measure.EVENTS)) {
                throw problem(p, "a tolerance for an unknown measure: " + e.getKey() + " is not a measure of this set");
            }
            JsonNode t = e.getValue();
            BigDecimal relative = t.has("relative") ? t.get("relative").decimalValue() : BigDecimal.ZERO;
            if (t.has("absolute") && !t.get("absolute").canConvertToLong()) {
                throw problem(p + "/absolute", "an absolute tolerance is a whole number in [0, 2^63)");
            }
            long absolute = t.has("absolute") ? t.get("absolute").longValue() : 0;
            out.put(e.getKey(), new Tolerance(relative, absolute));
        }
        return out;
    }

    private EventField field(String name, String at, EventFields fields) {
        return fields.field(name)
                .orElseThrow(() -> problem(
                        at,
                        "unknown field '" + name + "': events have " + fields.names()
                                + " (declare an attribute under `attributes` to use another field)"));
    }

    private void checkColumnName(String name, String at) {
        String problem = Identifiers.problem(name, Identifiers.MAX_COLUMN_NAME);
        if (problem != null) throw problem(at, problem);
        if (Identifiers.RESERVED_COLUMNS.contains(name)) {
            throw problem(at, "'" + name + "' is a column every set's tables already have; choose another name");
        }
        for (String prefix : Identifiers.RESERVED_PREFIXES) {
            if (name.startsWith(prefix)) {
                throw problem(
                        at,
                        "'" + name + "' starts with " + prefix + ", which the comparison's columns use;"
                                + " choose another name");
            }
        }
    }
}
