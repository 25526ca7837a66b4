package dev.recount.e2e.contract;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Markdown file links to and what it can be linked to by, as GitHub renders it: its relative links (inline and
 * reference definitions; not inside code), the repository paths its code spans name, and the anchors of its headings.
 * Fenced code blocks are neither linked nor headings.
 */
final class MarkdownFile {
    /** A link or path of the file: what it names, and the line (1-based) where it does. */
    record Reference(String target, int line) {}

    private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
    /** {@code ](target)} or {@code ](target "title")}, after code spans are blanked out. */
    private static final Pattern INLINE_LINK = Pattern.compile("\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    /** {@code [label]: target} at the start of a line. */
    private static final Pattern REFERENCE_DEFINITION = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*<?([^\\s>]+)>?");

    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)(?:\\s+#+)?\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    /** A path as docs write one in a code span: segments of plain characters, at least one slash. */
    private static final Pattern PATH = Pattern.compile("[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+");
    /** A scheme (https:, mailto:): not a file of the repository. */
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    final List<Reference> links = new ArrayList<>();
    final List<Reference> codePaths = new ArrayList<>();
    final Set<String> anchors = new LinkedHashSet<>();

    MarkdownFile(String text) {
        Map<String, Integer> slugsSeen = new HashMap<>();
        String fence = null;
        String[] lines = text.split("\\R", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            Matcher f = FENCE.matcher(line);
            if (fence != null) {
                if (f.find()
                        && f.group(1).charAt(0) == fence.charAt(0)
                        && f.group(1).length() >= fence.length()) fence = null;
                continue;
            }
            if (f.find()) {
                fence = f.group(1);
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int seen = slugsSeen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(seen == 0 ? slug : slug + "-" + seen);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) anchors.add(html.group(1));

            StringBuilder prose = new StringBuilder();
            Matcher code = CODE_SPAN.matcher(line);
            while (code.find()) {
                String span = code.group(2).strip();
                if (PATH.matcher(span).matches()) codePaths.add(new Reference(span, i + 1));
                code.appendReplacement(prose, " ".repeat(code.group().length()));
            }
            code.appendTail(prose);
            Matcher link = INLINE_LINK.matcher(prose);
            while (link.find()) addLink(link.group(1), i + 1);
            Matcher definition = REFERENCE_DEFINITION.matcher(prose);
            if (definition.find()) addLink(definition.group(1), i + 1);
        }
    }

    private void addLink(String target, int line) {
        if (!SCHEME.matcher(target).find()) links.add(new Reference(target, line));
    }

    /**
     * The anchor GitHub gives a heading: its rendered text (no code ticks, emphasis stars, link targets or HTML tags)
     * in lower case, without anything but letters, digits, marks, connector punctuation, spaces and hyphens, each space
     * a hyphen. A second heading of the same anchor gets "-1", a third "-2".
     */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .replaceAll("<[^>]+>", "")
                .replace("`", "")
                .replace("*", "")
                .strip()
                .toLowerCase(Locale.ROOT);
        StringBuilder slug = new StringBuilder();
        Normalizer.normalize(text, Normalizer.Form.NFC).codePoints().forEach(c -> {
            if (c == ' ') slug.append('-');
            else if (c == '-' || kept(c)) slug.appendCodePoint(c);
        });
        return slug.toString();
    }

    /** Letters, marks, numbers and connector punctuation (the underscore among them): what GitHub's slugs keep. */
    private static boolean kept(int c) {
        if (Character.isLetter(c)) return true;
        return switch (Character.getType(c)) {
            case Character.NON_SPACING_MARK,
                    Character.ENCLOSING_MARK,
                    Character.COMBINING_SPACING_MARK,
                    Character.DECIMAL_DIGIT_NUMBER,
                    Character.LETTER_NUMBER,
                    Character.OTHER_NUMBER,
                    Character.CONNECTOR_PUNCTUATION -> true;
            default -> false;
        };
    }
}
