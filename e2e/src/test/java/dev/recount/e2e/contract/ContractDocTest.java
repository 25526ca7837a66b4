package dev.recount.e2e.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.RecountConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/contract.md names exactly the commands, options, exit codes and settings the code has. The truth comes from
 * the code: the launcher's command table, each command's picocli tree (built by its module's main class), the
 * exit-code constants behind every {@code --help}, config/recount.properties and the setting keys the code reads. A
 * new command, option, exit code or setting fails here until the contract names it; so does a stale line.
 */
class ContractDocTest {
    /** Every command has these (RecountCli adds them); the contract says so once rather than in every table. */
    private static final Set<String> STANDARD_OPTIONS = Set.of("-h", "--help", "-V", "--version");
    /** A literal setting key handed to RecountConfig: config.get("lake.path"), .duration("window.size"), ... */
    private static final Pattern KEY_READ = Pattern.compile(
            "\\b(?:get|duration|integer|longInteger|decimal|with)\\(\"([a-z][a-z0-9_-]*(?:\\.[a-z0-9_-]+)*)\"");

    private static Path root;
    private static Map<String, LauncherCommands.Node> code;
    private static List<LauncherCommands.Alias> aliases;
    private static ContractDoc doc;

    @BeforeAll
    static void read() throws Exception {
        root = Path.of(System.getProperty("recount.root")).toAbsolutePath().normalize();
        LauncherCommands commands = LauncherCommands.readAll(root);
        code = commands.nodes();
        aliases = commands.aliases();
        doc = new ContractDoc(Files.readString(root.resolve("docs/contract.md")));
    }

    @Test
    void everyCommandIsDocumentedAndEveryDocumentedCommandExists() {
        assertThat(doc.commands.keySet())
                .as("### `recount ...` sections of docs/contract.md")
                .containsExactlyInAnyOrderElementsOf(code.keySet());
    }

    @Test
    void everyOptionIsDocumentedAndEveryDocumentedOptionExists() {
        List<String> wrong = new ArrayList<>();
        code.forEach((path, node) -> {
            ContractDoc.Command documented = doc.commands.get(path);
            if (documented == null) return; // reported by the test above
            for (String option : node.options()) {
                if (!documented.options().contains(option)
                        && !STANDARD_OPTIONS.contains(option)
                        && node.source() != LauncherCommands.Source.LAUNCHER) {
                    wrong.add(path + " " + option + ": not in the contract");
                }
            }
            if (node.source() == LauncherCommands.Source.LAUNCHER) {
                node.options().stream()
                        .filter(o -> !documented.options().contains(o))
                        .forEach(o -> wrong.add(path + " " + o + ": not in the contract"));
            }
            for (String option : documented.options()) {
                if (!node.options().contains(option))
                    wrong.add(path + " " + option + ": in the contract, not in the code");
            }
        });
        assertThat(wrong).isEmpty();
    }

    @Test
    void everyCommandHasHelpAndVersion() {
        List<String> lacking = code.values().stream()
                .filter(n -> n.source() != LauncherCommands.Source.LAUNCHER
                        || n.path().equals("recount"))
                .filter(n -> !n.options().containsAll(STANDARD_OPTIONS))
                .map(n -> n.path() + " has only " + n.options())
                .collect(Collectors.toList());
        assertThat(lacking).isEmpty();
        assertThat(doc.commandsIntro).contains("`--help`", "`--version`");
    }

    @Test
    void everyExitCodeIsDocumentedAndEveryDocumentedExitCodeExists() {
        List<String> wrong = new ArrayList<>();
        TreeSet<Integer> common = RecountCli.exitCodes(null).keySet().stream()
                .map(c -> c.code())
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(doc.exitCodesOf("recount"))
                .as("the exit codes every command shares (### `recount`)")
                .containsExactlyElementsOf(common);
        code.forEach((path, node) -> {
            if (!doc.commands.containsKey(path)) return;
            TreeSet<Integer> documented = doc.exitCodesOf(path);
            switch (node.source()) {
                case PICOCLI -> {
                    if (!documented.equals(node.exitCodes())) {
                        wrong.add(path + ": the code has exit codes " + node.exitCodes() + ", the contract "
                                + documented);
                    }
                }
                case SCRIPT -> {
                    // A script's codes are partly computed; at least every literal `exit N` must be documented.
                    if (!documented.containsAll(node.exitCodes())) {
                        wrong.add(
                                path + ": the script exits " + node.exitCodes() + ", the contract names " + documented);
                    }
                }
                case LAUNCHER -> {}
            }
        });
        assertThat(wrong).isEmpty();
    }

    /** Each old spelling is a row of the "Changes" section: `recount X` | `--old` | `--new`. */
    @Test
    void everyOldSpellingIsListedInTheChanges() {
        String changes = doc.changes;
        List<String> missing = aliases.stream()
                .filter(a -> !changes.contains("`" + a.path() + " " + a.old() + "`"))
                .map(a -> a.path() + " " + a.old() + " (now " + a.now() + ")")
                .collect(Collectors.toList());
        assertThat(missing).isEmpty();
    }

    @Test
    void everyMainRunsOnlyCommandsTheLauncherReaches() throws Exception {
        assertThat(LauncherCommands.rootsNamedRecount(root)).isEmpty();
    }

    @Test
    void everySettingIsDocumentedAndEveryDocumentedSettingExists() throws IOException {
        assertThat(doc.settings.keySet())
                .as("settings in docs/contract.md vs config/recount.properties")
                .containsExactlyInAnyOrderElementsOf(referenceKeys());
    }

    @Test
    void everyEnvironmentOverrideIsDocumentedWithItsSetting() {
        List<String> missing = new ArrayList<>();
        RecountConfig.environmentOverrides().forEach((variable, key) -> {
            String row = doc.settings.get(key);
            if (row == null || !row.contains("`" + variable + "`")) missing.add(key + " <- $" + variable);
        });
        assertThat(missing).isEmpty();
    }

    @Test
    void everySettingTheCodeReadsIsInTheReference() throws IOException {
        Set<String> reference = referenceKeys();
        Set<String> namespaces = reference.stream().map(k -> k.split("\\.")[0]).collect(Collectors.toSet());
        Map<String, String> unknown = new TreeMap<>();
        Set<String> read = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(ContractDocTest::isMainSource).toList()) {
                Matcher m = KEY_READ.matcher(Files.readString(file));
                while (m.find()) {
                    String key = m.group(1);
                    boolean looksLikeASetting =
                            namespaces.contains(key.split("\\.")[0]) && (key.contains(".") || reference.contains(key));
                    if (looksLikeASetting) read.add(key);
                    if (looksLikeASetting && !reference.contains(key))
                        unknown.put(key, root.relativize(file).toString());
                }
            }
        }
        assertThat(read).as("the scan finds the keys the code reads").contains("lake.path", "window.size", "time-zone");
        assertThat(unknown)
                .as("keys read in code but missing from config/recount.properties")
                .isEmpty();
    }

    private static boolean isMainSource(Path p) {
        String s = p.toString();
        return s.endsWith(".java") && s.contains("/src/main/java/") && !s.contains("/target/") && !s.contains("/.git/");
    }

    private static Set<String> referenceKeys() throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(root.resolve("config/recount.properties"))) {
            p.load(in);
        }
        return new TreeSet<>(p.stringPropertyNames());
    }
}
