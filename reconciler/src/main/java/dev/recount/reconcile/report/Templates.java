package dev.recount.reconcile.report;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.util.HtmlEscaper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.List;

/**
 * The report's HTML templates (Mustache, resources next to this class). {@code {{value}}} is HTML-escaped by the
 * engine, so a campaign id cannot become markup; {@code {{{fragment}}}} is used only for fragments rendered from
 * these templates themselves (a set's part of the page, the chart, a report section). Templates are compiled once and cached.
 */
public final class Templates {
    private static final DefaultMustacheFactory FACTORY = new DefaultMustacheFactory("dev/recount/reconcile/report") {
        @Override
        public void encode(String value, Writer writer) {
            // Control characters other than tab and line breaks are not allowed in HTML text: show U+FFFD instead
            // (the engine alone would write a numeric reference to them). Bidi controls are shown by name, as in
            // the CSV: escaped or not, they would still reorder how an id reads on the page.
            HtmlEscaper.escape(SpreadsheetText.showBidiControls(withoutControls(value)), writer);
        }
    };

    /** The templates a report renders itself; every other one is a partial ({@code {{> name}}}) of these. */
    public static final String REPORT = "report.mustache",
            SET = "set.mustache",
            WINDOW_CHART = "window-chart.mustache",
            ATTRIBUTION = "attribution.mustache";

    static final List<String> RENDERED = List.of(REPORT, SET, WINDOW_CHART, ATTRIBUTION);

    private Templates() {}

    /**
     * Compiles every template (with its partials) and renders it once without values, into nothing: what the first
     * render in a JVM costs besides the values (parsing, the engine's classes, its reflection), done ahead.
     */
    static void preload() {
        for (String name : RENDERED) render(name, new Object());
    }

    /** Renders the template {@code name} (e.g. "report.mustache") with {@code view}'s accessors as its values. */
    public static String render(String name, Object view) {
        Mustache template = FACTORY.compile(name);
        StringWriter out = new StringWriter(16 * 1024);
        try {
            template.execute(out, view).flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot render " + name, e);
        }
        return out.toString();
    }

    static String withoutControls(String s) {
        StringBuilder sb = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean control = c < 0x20 && c != '\t' && c != '\n' && c != '\r';
            if (control && sb == null) sb = new StringBuilder(s.length()).append(s, 0, i);
            if (sb != null) sb.append(control ? '\uFFFD' : c);
        }
        return sb == null ? s : sb.toString();
    }
}
