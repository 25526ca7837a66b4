package dev.recount.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.representer.Representer;

/**
 * The suite's metric sets (resource {@code metric-sets.yaml}, next to this class): three sets, which every round
 * passes as metric-sets.file to every command; the round that adds a set starts without {@link #ADDED}.
 */
final class SuiteSets {
    /** The set the SET_ADDED round adds to a running deployment: 1-minute windows, attribution, a filtered count. */
    static final String ADDED = "channel_country";

    private SuiteSets() {}

    /** The file's text, comments and all. */
    static String yaml() {
        try (InputStream in = SuiteSets.class.getResourceAsStream("metric-sets.yaml")) {
            if (in == null) throw new IllegalStateException("no metric-sets.yaml next to " + SuiteSets.class);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The file without set {@code name} (and without its comments: the text is written anew). */
    @SuppressWarnings("unchecked")
    static String without(String name) {
        Map<String, Object> root =
                (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml());
        List<Map<String, Object>> sets = (List<Map<String, Object>>) root.get("sets");
        if (!sets.removeIf(s -> name.equals(s.get("name"))))
            throw new IllegalArgumentException("the suite's metric sets have no set " + name);
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        return "# The suite's metric sets without " + name + " (SET_ADDED adds it later).\n"
                + new Yaml(new Representer(options), options).dump(root);
    }
}
