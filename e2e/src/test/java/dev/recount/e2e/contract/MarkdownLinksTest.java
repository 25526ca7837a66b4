package dev.recount.e2e.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every Markdown file of the repository (outside build output and the local stack's home) links only files that
 * exist, and every anchor into a Markdown file names one of its headings: a moved or renamed file, section or
 * manifest fails here, not in a reader's browser. A code span that names a repository path with a file name (as
 * docs/operations.md names {@code deploy/k8s/backfill-scheduled.yaml}) must name an existing file too.
 */
class MarkdownLinksTest {
    /** Directories whose Markdown is not the repository's: build output, the local stack's home, git itself. */
    private static final Set<String> SKIPPED_DIRECTORIES = Set.of("target", ".recount", ".git", "node_modules");
    /** The last segment of a path that names a file: a name, a dot, an extension. */
    private static final Pattern FILE_NAME = Pattern.compile("[^.][^/]*\\.[A-Za-z0-9]+");

    private static Path root;
    private static Map<Path, MarkdownFile> docs;

    @BeforeAll
    static void read() throws IOException {
        root = Path.of(System.getProperty("recount.root")).toAbsolutePath().normalize();
        docs = new HashMap<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                return SKIPPED_DIRECTORIES.contains(String.valueOf(dir.getFileName())) && !dir.equals(root)
                        ? FileVisitResult.SKIP_SUBTREE
                        : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (attributes.isRegularFile() && file.toString().endsWith(".md"))
                    docs.put(file, new MarkdownFile(read(file)));
                return FileVisitResult.CONTINUE;
            }
        });
    }

    @Test
    void theRepositorysDocumentsAreFound() {
        assertThat(docs.keySet())
                .as("Markdown files under %s", root)
                .contains(
                        root.resolve("README.md"), root.resolve("docs/contract.md"), root.resolve("docs/benchmarks.md"))
                .noneMatch(p -> Stream.iterate(root.relativize(p).getParent(), d -> d != null, Path::getParent)
                        .anyMatch(d ->
                                SKIPPED_DIRECTORIES.contains(d.getFileName().toString())));
    }

    @Test
    void everyRelativeLinkNamesAFileThatExistsAndEveryAnchorAHeadingOfIt() {
        List<String> broken = new ArrayList<>();
        docs.forEach((doc, md) -> {
            for (MarkdownFile.Reference link : md.links) {
                String problem = problemOf(doc, link.target());
                if (problem != null) broken.add(where(doc, link) + ": (" + link.target() + ") " + problem);
            }
        });
        assertThat(broken).isEmpty();
    }

    @Test
    void everyRepositoryPathInACodeSpanNamesAFileThatExists() {
        Set<String> topLevel = topLevelDirectories();
        List<String> missing = new ArrayList<>();
        docs.forEach((doc, md) -> {
            for (MarkdownFile.Reference path : md.codePaths) {
                String[] segments = path.target().split("/");
                boolean namesARepositoryFile = topLevel.contains(segments[0])
                        && Stream.of(segments).noneMatch(s -> s.equals("target") || s.matches("\\.\\.+"))
                        && FILE_NAME.matcher(segments[segments.length - 1]).matches();
                if (namesARepositoryFile
                        && !Files.exists(root.resolve(path.target()))
                        && !Files.exists(doc.resolveSibling(path.target()))) {
                    missing.add(where(doc, path) + ": `" + path.target() + "` does not exist");
                }
            }
        });
        assertThat(missing).isEmpty();
    }

    // The checker itself: each of these fails if the rule it names is taken out.

    @Test
    void anchorsAreGitHubsHeadingSlugsWithRepeatsNumbered() {
        MarkdownFile md = new MarkdownFile("""
                # Benchmarks
                ### 9. Lake compaction: `backfill range` of one day, 1,008,000 keys
                ## window_corrections partitioned (V19, V20)
                ## 4. Freshness
                ## 4. Freshness
                ## Before / after — [the job](x.md) *as shipped*
                - <a id="input-deleted"></a>**Input deleted**
                """);

        assertThat(md.anchors)
                .containsExactly(
                        "benchmarks",
                        "9-lake-compaction-backfill-range-of-one-day-1008000-keys",
                        "window_corrections-partitioned-v19-v20",
                        "4-freshness",
                        "4-freshness-1",
                        "before--after--the-job-as-shipped",
                        "input-deleted");
    }

    @Test
    void linksAreReadOutsideCodeAndWebLinksAreNotFiles() {
        MarkdownFile md = new MarkdownFile("""
                See [ops](docs/operations.md#threat-model "title") and ![chart](img/a.png), [web](https://x.org/a.md).
                Not a link: `[x](missing.md)`.
                ```bash
                echo "[y](missing-too.md)"   # deploy/k8s/nothing.yaml
                ```
                [ref]: ../db/README.md
                Paths: `deploy/k8s/backfill-scheduled.yaml` and `a b/c`.
                """);

        assertThat(md.links)
                .containsExactly(
                        new MarkdownFile.Reference("docs/operations.md#threat-model", 1),
                        new MarkdownFile.Reference("img/a.png", 1),
                        new MarkdownFile.Reference("../db/README.md", 6));
        assertThat(md.codePaths).containsExactly(new MarkdownFile.Reference("deploy/k8s/backfill-scheduled.yaml", 7));
    }

    @Test
    void aMissingFileAndAMissingHeadingAreEachReported() {
        Path readme = root.resolve("README.md");
        assertThat(problemOf(readme, "docs/no-such-page.md")).isEqualTo("no such file");
        assertThat(problemOf(readme, "docs/operations.md#no-such-section")).isEqualTo("no such heading in it");
        assertThat(problemOf(readme, "#no-such-section")).isEqualTo("no such heading in it");
        assertThat(problemOf(readme, "docs/operations.md#threat-model")).isNull();
        assertThat(problemOf(readme, "deploy/k8s/backfill-scheduled.yaml")).isNull();
    }

    /** Why {@code target}, linked from {@code doc}, does not resolve, or null when it does. */
    private static String problemOf(Path doc, String target) {
        int hash = target.indexOf('#');
        String path = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String anchor = hash < 0 ? "" : target.substring(hash + 1);
        Path file = path.isEmpty()
                ? doc
                : path.startsWith("/")
                        ? root.resolve(path.substring(1)).normalize()
                        : doc.resolveSibling(path).normalize();
        if (!file.startsWith(root) || !Files.exists(file)) return "no such file";
        if (anchor.isEmpty() || !file.toString().endsWith(".md") || !Files.isRegularFile(file)) return null;
        MarkdownFile linked = docs.containsKey(file) ? docs.get(file) : new MarkdownFile(read(file));
        return linked.anchors.contains(anchor) ? null : "no such heading in it";
    }

    /**
     * The repository's own top-level directories: not the ones a run makes (.recount, whose paths the docs name as
     * what a run will create, and which a fresh clone lacks) or tools keep.
     */
    private static Set<String> topLevelDirectories() {
        try (Stream<Path> top = Files.list(root)) {
            return Set.copyOf(top.filter(Files::isDirectory)
                    .map(p -> p.getFileName().toString())
                    .filter(name -> !SKIPPED_DIRECTORIES.contains(name))
                    .toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String where(Path doc, MarkdownFile.Reference reference) {
        return root.relativize(doc) + ":" + reference.line();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
