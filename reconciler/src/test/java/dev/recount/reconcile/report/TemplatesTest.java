package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class TemplatesTest {
    record KeyCells(String window, java.util.List<String> dimensions) {}

    @Test
    void idsAreEscapedAndTheirBidiControlsShownByName() {
        String html = Templates.render(
                "key-cells.mustache",
                new KeyCells("2026-11-29T10:00Z", java.util.List.of("gpj\u202E<b>x</b>", "ch\u0000\u2066a")));

        assertThat(html)
                .contains("gpj&lt;U+202E&gt;&lt;b&gt;x&lt;/b&gt;")
                .contains("ch\uFFFD&lt;U+2066&gt;a")
                .doesNotContain("\u202E")
                .doesNotContain("\u2066")
                .doesNotContain("<b>");
    }

    @Test
    void preloadRendersEveryTemplateThatIsNoPartial() throws IOException {
        Path dir = Path.of("src/main/resources/dev/recount/reconcile/report");
        Set<String> all = new TreeSet<>(), partials = new TreeSet<>();
        Pattern include = Pattern.compile("\\{\\{>\\s*([a-z-]+)\\s*}}");
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".mustache")).toList()) {
                all.add(f.getFileName().toString());
                Matcher m = include.matcher(Files.readString(f));
                while (m.find()) partials.add(m.group(1) + ".mustache");
            }
        }
        all.removeAll(partials);
        assertThat(all).as("templates nothing includes").containsExactlyInAnyOrderElementsOf(Templates.RENDERED);
        Templates.preload();
        ReportWriter.preload(dev.recount.reconcile.testutils.DefaultSet.SET);
    }
}
