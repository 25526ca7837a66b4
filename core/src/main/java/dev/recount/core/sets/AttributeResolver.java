package dev.recount.core.sets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.event.IdRule;
import java.io.Serializable;
import java.util.List;

/**
 * The rule of declared attributes (CONTRACT §1, "Attributes"), once: from an event's fields beyond the contract, each
 * declared attribute's value — present and valid, or absent (or JSON null) and defaulted — or the problem that makes
 * the record a {@code schema} dead letter. The validator applies it to every record; the batch layer applies it to
 * the lake's {@code attributes} column, so a set declared after its events were archived counts them as the stream
 * would have.
 */
public final class AttributeResolver implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final ObjectReader JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
            .build()
            .readerFor(JsonNode.class);

    private final Attribute[] attributes;
    private final int[] slots;
    private final int strings;
    private final int integers;

    public AttributeResolver(List<Attribute> attributes) {
        this.attributes = attributes.toArray(Attribute[]::new);
        this.slots = new int[this.attributes.length];
        int s = 0;
        int n = 0;
        for (int i = 0; i < this.attributes.length; i++) {
            if (EventFields.CONTRACT_FIELDS.contains(this.attributes[i].name())) {
                throw new IllegalArgumentException(
                        "attribute " + this.attributes[i].name() + " has the name of a contract field");
            }
            slots[i] = this.attributes[i].type() == FieldType.STRING ? s++ : n++;
        }
        this.strings = s;
        this.integers = n;
    }

    /** How many string attributes are declared: the length of {@code AdEvent.stringAttributes}. */
    public int stringCount() {
        return strings;
    }

    /** How many integer attributes are declared: the length of {@code AdEvent.integerAttributes}. */
    public int integerCount() {
        return integers;
    }

    /**
     * Fills {@code strings} and {@code integers} (each in declaration order among its type) from {@code extras}, the
     * record's fields beyond the contract (null when it has none). Null when every declared attribute holds to its
     * rule, else the first problem, as a dead letter's detail.
     */
    public String resolve(ObjectNode extras, String[] strings, long[] integers) {
        for (int i = 0; i < attributes.length; i++) {
            Attribute a = attributes[i];
            JsonNode v = extras == null ? null : extras.get(a.name());
            boolean string = a.type() == FieldType.STRING;
            if (v == null || v.isNull()) {
                if (a.required()) return a.name() + " is missing; it is a required attribute (metric-sets file)";
                if (string) strings[slots[i]] = a.defaultValue();
                else integers[slots[i]] = a.defaultNumber();
                continue;
            }
            if (string) {
                if (!v.isTextual())
                    return a.name() + " must be a string, got "
                            + v.getNodeType().name().toLowerCase();
                String text = v.textValue();
                if (!a.values().isEmpty()) {
                    if (!a.values().contains(text)) {
                        return a.name() + " " + quoted(text) + " is not one of "
                                + shown(a.values().toString());
                    }
                } else {
                    String problem = IdRule.problem(a.name(), text);
                    if (problem != null) return problem;
                }
                strings[slots[i]] = text;
            } else {
                if (v.isTextual()) return a.name() + " must be a JSON integer, not a string";
                if (!v.isIntegralNumber()) return a.name() + " must be an integer, got " + shown(v.toString());
                if (!v.canConvertToLong() || v.longValue() < 0) {
                    return a.name() + " " + shown(v.asText()) + " is not a whole number in [0, 2^63)";
                }
                integers[slots[i]] = v.longValue();
            }
        }
        return null;
    }

    /** The values of {@code attributesJson} (the lake's column; null: no fields beyond the contract). */
    public Resolved resolve(String attributesJson) {
        ObjectNode extras = null;
        if (attributesJson != null) {
            try {
                JsonNode n = JSON.readTree(attributesJson);
                if (!(n instanceof ObjectNode o)) return new Resolved(null, null, "attributes is not a JSON object");
                extras = o;
            } catch (JsonProcessingException e) {
                return new Resolved(null, null, "attributes is not JSON: " + e.getOriginalMessage());
            }
        }
        String[] s = new String[strings];
        long[] n = new long[integers];
        String problem = resolve(extras, s, n);
        return problem == null ? new Resolved(s, n, null) : new Resolved(null, null, problem);
    }

    /** Declared attributes' values, or why they have none ({@code problem} non-null, arrays null). */
    public record Resolved(String[] strings, long[] integers, String problem) {
        public boolean isValid() {
            return problem == null;
        }
    }

    private static String quoted(String s) {
        return "'" + shown(s) + "'";
    }

    private static String shown(String s) {
        return IdRule.printable(s, 80);
    }
}
