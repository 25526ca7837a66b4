package dev.recount.deploy.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** Reads the Grafana dashboards of deploy/monitoring/grafana/dashboards: their panels and their PromQL. */
final class GrafanaDashboards {
    static final Path GRAFANA = ManifestsTest.MONITORING.resolve("grafana");
    static final Path DIR = GRAFANA.resolve("dashboards");
    /** Grafana's {@code label_values(metric, label)}: the metric part is PromQL of its own. */
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*(.+?)\\s*,\\s*\\w+\\s*\\)");

    /** One PromQL expression of a dashboard, and where it is (for messages). */
    record Query(String where, String expr) {}

    private GrafanaDashboards() {}

    static List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(DIR)) {
            return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
    }

    static JsonNode read(Path dashboard) throws IOException {
        return new ObjectMapper().readTree(dashboard.toFile());
    }

    /** Every panel, those inside collapsed rows too. */
    static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode p : dashboard.path("panels")) {
            out.add(p);
            for (JsonNode inner : p.path("panels")) out.add(inner);
        }
        return out;
    }

    /** The expressions of every panel's targets and of every query variable. */
    static List<Query> queries(JsonNode dashboard) {
        List<Query> out = new ArrayList<>();
        for (JsonNode p : panels(dashboard)) {
            for (JsonNode t : p.path("targets")) {
                out.add(new Query(
                        "panel '" + p.path("title").asText() + "' "
                                + t.path("refId").asText(),
                        t.path("expr").asText()));
            }
        }
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (!v.path("type").asText().equals("query")) continue;
            JsonNode q = v.path("query");
            String text = q.isTextual() ? q.asText() : q.path("query").asText();
            Matcher m = LABEL_VALUES.matcher(text);
            if (!m.matches())
                throw new AssertionError(
                        "variable " + v.path("name").asText() + ": not label_values(metric, label): " + text);
            out.add(new Query("variable $" + v.path("name").asText(), m.group(1)));
        }
        return out;
    }
}
