package dev.recount.core.sets;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.Map;

/**
 * A YAML document read into a Jackson tree that remembers the line of every value, by JSON pointer ({@code
 * /sets/1/measures/0/kind}), so that a schema error or a rule broken anywhere in it names its line. Jackson's own
 * tree keeps no locations; the tree is built here from the parser's tokens. A key given twice in one mapping is an
 * error (which copy would count is a guess), as are anchors and aliases' surprises: plain data only.
 */
final class LocatedYaml {
    private static final YAMLFactory YAML = new YAMLFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

    final JsonNode root;
    private final Map<String, Integer> lines;

    private LocatedYaml(JsonNode root, Map<String, Integer> lines) {
        this.root = root;
        this.lines = lines;
    }

    /** Reads {@code text}; a syntax error or a repeated key is a {@link DefinitionException} with its line. */
    static LocatedYaml read(String text, String source) {
        Map<String, Integer> lines = new HashMap<>();
        try (JsonParser p = YAML.createParser(text)) {
            JsonToken first = p.nextToken();
            if (first == null) throw new DefinitionException(source, 0, "the file is empty");
            JsonNode root = value(p, "", lines, source);
            if (p.nextToken() != null) {
                throw new DefinitionException(source, line(p), "more than one YAML document; give one");
            }
            return new LocatedYaml(root, lines);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new DefinitionException(
                    source, at == null ? 0 : at.getLineNr(), "not valid YAML: " + oneLine(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new DefinitionException(source, 0, "cannot read: " + e.getMessage());
        }
    }

    private static JsonNode value(JsonParser p, String pointer, Map<String, Integer> lines, String source)
            throws IOException {
        lines.putIfAbsent(pointer, line(p));
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                ObjectNode o = NODES.objectNode();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    int keyLine = line(p);
                    String child = pointer + "/" + escape(name);
                    if (o.has(name)) {
                        throw new DefinitionException(source, keyLine, "key '" + name + "' is given twice");
                    }
                    lines.put(child, keyLine);
                    p.nextToken();
                    o.set(name, value(p, child, lines, source));
                }
                return o;
            }
            case START_ARRAY -> {
                ArrayNode a = NODES.arrayNode();
                int i = 0;
                for (JsonToken k = p.nextToken(); k != JsonToken.END_ARRAY; k = p.nextToken()) {
                    a.add(value(p, pointer + "/" + i++, lines, source));
                }
                return a;
            }
            case VALUE_STRING -> {
                return NODES.textNode(p.getText());
            }
            case VALUE_NUMBER_INT -> {
                return NODES.numberNode(p.getBigIntegerValue());
            }
            case VALUE_NUMBER_FLOAT -> {
                // As written: "0.001" stays one in a thousand, not the nearest double.
                return NODES.numberNode(new BigDecimal(p.getText()));
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return NODES.booleanNode(t == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return NODES.nullNode();
            }
            default -> throw new DefinitionException(source, line(p), "unexpected " + t);
        }
    }

    /** The line of the value (or key) at {@code pointer}, or of its nearest enclosing value; 0 if unknown. */
    int lineOf(String pointer) {
        String p = pointer;
        while (true) {
            Integer line = lines.get(p);
            if (line != null) return line;
            if (p.isEmpty()) return 0;
            p = p.substring(0, Math.max(0, p.lastIndexOf('/')));
        }
    }

    private static int line(JsonParser p) {
        JsonLocation at = p.currentTokenLocation();
        return at == null ? 0 : at.getLineNr();
    }

    /**
     * SnakeYAML's message without the excerpt of the file it draws under it (the line number says where): its
     * sentences joined on one line.
     */
    private static String oneLine(String message) {
        StringBuilder b = new StringBuilder();
        for (String line : String.valueOf(message).split("\\R")) {
            if (line.isBlank() || Character.isWhitespace(line.charAt(0))) continue; // the excerpt and its caret
            b.append(b.length() == 0 ? "" : "; ").append(line.strip());
        }
        return b.toString();
    }

    /** JSON pointer escaping of one key (RFC 6901). */
    static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }
}
