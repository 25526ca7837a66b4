package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TemplatesTest {
    record KeyCells(String window, String campaign, String channel) {}

    @Test
    void idsAreEscapedAndTheirBidiControlsShownByName() {
        String html = Templates.render(
                "key-cells.mustache", new KeyCells("2026-11-29T10:00Z", "gpj\u202E<b>x</b>", "ch\u0000\u2066a"));

        assertThat(html)
                .contains("gpj&lt;U+202E&gt;&lt;b&gt;x&lt;/b&gt;")
                .contains("ch\uFFFD&lt;U+2066&gt;a")
                .doesNotContain("\u202E")
                .doesNotContain("\u2066")
                .doesNotContain("<b>");
    }
}
