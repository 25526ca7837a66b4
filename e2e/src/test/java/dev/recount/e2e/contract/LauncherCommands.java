package dev.recount.e2e.contract;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every command users can type, as the code defines it: the launcher's table (command to module, main class and
 * subcommand), then each main class's picocli tree, read in a class loader of that module's own classes and runtime
 * classpath (Flink, Spark and the Kafka broker never share a classpath, so neither can this test's).
 */
final class LauncherCommands {
    /** One command or subcommand: its option names and exit codes ({@code exitCodes} empty for a script's). */
    record Node(String path, TreeSet<String> options, TreeSet<Integer> exitCodes, Source source) {}

    enum Source {
        PICOCLI,
        SCRIPT,
        LAUNCHER
    }

    /** {@code  up|down|status) target=(local-stack dev.recount.stack.LocalStackMain "$cmd") ;;} */
    private static final Pattern TARGET = Pattern.compile("(?m)^\\s*([^\\s()]+)\\)\\s*target=\\(([^)]*)\\)\\s*;;");
    /** The launcher's own help line: {@code ""|-h|--help|help) usage; exit 0 ;;}. */
    private static final Pattern HELP = Pattern.compile("(?m)^\\s*\"\"\\|([^)]*)\\)\\s*usage; exit 0");
    /** A script's option cases: {@code --date) ...}, {@code -h|--help) ...}. */
    private static final Pattern SCRIPT_OPTION = Pattern.compile("(?m)^\\s*(-[-\\w]+(?:\\|-[-\\w]+)*)\\)");
    /** Commands whose {@code --cluster} the launcher takes itself: {@code stream|backfill)} then {@code take_cluster_flag}. */
    private static final Pattern CLUSTER_FLAG = Pattern.compile("(?m)^\\s*([\\w|]+)\\)\\s*\\n\\s*take_cluster_flag");

    private static final Pattern SCRIPT_EXIT = Pattern.compile("\\bexit (\\d+)\\b");

    /** An old option spelling still accepted ({@code @OldName}): {@code recount reconcile pending --days} is {@code --since}. */
    record Alias(String path, String old, String now) {}

    private final Path root;
    private final Map<String, Node> nodes = new TreeMap<>();
    private final List<Alias> aliases = new ArrayList<>();

    private LauncherCommands(Path root) {
        this.root = root;
    }

    /** Reads {@code root/recount} and everything it dispatches to. */
    static Map<String, Node> read(Path root) throws Exception {
        return readAll(root).nodes;
    }

    /** The commands and the old spellings they accept. */
    static LauncherCommands readAll(Path root) throws Exception {
        LauncherCommands commands = new LauncherCommands(root);
        commands.readLauncher(Files.readString(root.resolve("recount")));
        return commands;
    }

    Map<String, Node> nodes() {
        return nodes;
    }

    List<Alias> aliases() {
        return aliases;
    }

    private void readLauncher(String launcher) throws Exception {
        TreeSet<String> ownOptions = new TreeSet<>();
        Matcher help = HELP.matcher(launcher);
        if (!help.find())
            throw new AssertionError("the launcher has no help case (\"\"|-h|--help|help) usage; exit 0)");
        for (String name : help.group(1).split("\\|")) if (name.startsWith("-")) ownOptions.add(name);

        // Several launcher commands may share one main class (local-stack's, tools'); read each tree once.
        Map<String, List<String>> treeOfMain = new LinkedHashMap<>();
        Matcher m = TARGET.matcher(launcher);
        int targets = 0;
        while (m.find()) {
            targets++;
            List<String> target = Arrays.asList(m.group(2).trim().split("\\s+"));
            for (String command : m.group(1).split("\\|")) {
                if (command.startsWith("-")) {
                    ownOptions.add(command); // ./recount --version
                } else if (target.get(0).equals("build")) {
                    nodes.put(
                            "recount " + command,
                            new Node("recount " + command, new TreeSet<>(), new TreeSet<>(), Source.LAUNCHER));
                } else if (target.get(0).equals("script")) {
                    readScript("recount " + command, root.resolve(target.get(1)));
                } else {
                    String module = target.get(0);
                    String main = target.get(1);
                    List<String> lines = treeOfMain.get(main);
                    if (lines == null) {
                        lines = describe(module, main);
                        treeOfMain.put(main, lines);
                    }
                    String sub = target.size() > 2 ? unquote(target.get(2), command) : null;
                    readTree("recount " + command, lines, sub, module + " " + main);
                }
            }
        }
        if (targets == 0) throw new AssertionError("no target=(...) lines in the launcher's command table");
        Matcher cluster = CLUSTER_FLAG.matcher(launcher);
        if (!cluster.find())
            throw new AssertionError("the launcher takes --cluster for no command (take_cluster_flag)");
        for (String command : cluster.group(1).split("\\|"))
            nodes.get("recount " + command).options().add("--cluster");
        nodes.put("recount", new Node("recount", ownOptions, new TreeSet<>(), Source.LAUNCHER));
    }

    /** {@code "$cmd"} is the command itself; anything else a literal subcommand name. */
    private static String unquote(String word, String command) {
        return word.equals("\"$cmd\"") ? command : word.replace("\"", "");
    }

    /**
     * Takes the nodes of {@code lines} under {@code path}. A main whose root is named {@code recount} (local-stack's,
     * tools', the stream's) is called with the subcommand first; its root is not a command of its own.
     */
    private void readTree(String path, List<String> lines, String sub, String where) {
        String prefix = lines.get(0).substring("command ".length()); // the tree's root path
        String wanted = sub == null ? prefix : prefix + " " + sub;
        if (sub == null && !prefix.equals(path)) {
            throw new AssertionError(
                    where + " is the command '" + prefix + "' but the launcher runs it as '" + path + "'");
        }
        boolean found = false;
        for (String line : lines) {
            String[] parts = line.split(" ", 2);
            String rest = parts[1];
            if (parts[0].equals("alias")) {
                // alias <path> <old> <new>: an old spelling, listed in the contract's "Changes", not its tables.
                String[] words = rest.split(" ");
                String aliasPath = String.join(" ", java.util.Arrays.copyOf(words, words.length - 2));
                if (aliasPath.equals(wanted) || aliasPath.startsWith(wanted + " ")) {
                    aliases.add(new Alias(
                            path + aliasPath.substring(wanted.length()),
                            words[words.length - 2],
                            words[words.length - 1]));
                }
                continue;
            }
            String nodePath = parts[0].equals("command") ? rest : rest.substring(0, rest.lastIndexOf(' '));
            if (!nodePath.equals(wanted) && !nodePath.startsWith(wanted + " ")) continue;
            String userPath = path + nodePath.substring(wanted.length());
            Node node =
                    nodes.computeIfAbsent(userPath, p -> new Node(p, new TreeSet<>(), new TreeSet<>(), Source.PICOCLI));
            switch (parts[0]) {
                case "command" -> found = true;
                case "option", "parameter" -> node.options().add(rest.substring(rest.lastIndexOf(' ') + 1));
                case "exit" -> node.exitCodes().add(Integer.parseInt(rest.substring(rest.lastIndexOf(' ') + 1)));
                default -> throw new AssertionError("unexpected line from CommandTree: " + line);
            }
        }
        if (!found)
            throw new AssertionError(
                    "the launcher runs '" + path + "' with " + where + ", which has no command '" + wanted + "'");
    }

    private void readScript(String path, Path script) throws IOException {
        String text = Files.readString(script);
        TreeSet<String> options = new TreeSet<>();
        Matcher o = SCRIPT_OPTION.matcher(text);
        while (o.find()) options.addAll(Arrays.asList(o.group(1).split("\\|")));
        TreeSet<Integer> exits = new TreeSet<>();
        Matcher e = SCRIPT_EXIT.matcher(text);
        while (e.find()) exits.add(Integer.parseInt(e.group(1)));
        nodes.put(path, new Node(path, options, exits, Source.SCRIPT));
    }

    /** Every main class that runs a command whose root is the shared {@code recount}: its subcommands must be reachable. */
    static List<String> rootsNamedRecount(Path root) throws Exception {
        List<String> unreachable = new ArrayList<>();
        String launcher = Files.readString(root.resolve("recount"));
        Map<String, TreeSet<String>> launched = new TreeMap<>();
        Map<String, String> moduleOf = new TreeMap<>();
        Matcher m = TARGET.matcher(launcher);
        while (m.find()) {
            List<String> target = Arrays.asList(m.group(2).trim().split("\\s+"));
            if (target.size() < 3) continue;
            moduleOf.put(target.get(1), target.get(0));
            for (String command : m.group(1).split("\\|")) {
                launched.computeIfAbsent(target.get(1), k -> new TreeSet<>()).add(unquote(target.get(2), command));
            }
        }
        for (Map.Entry<String, TreeSet<String>> e : launched.entrySet()) {
            for (String line : describe(moduleOf.get(e.getKey()), e.getKey())) {
                String[] words = line.split(" ");
                if (words[0].equals("command")
                        && words.length == 3
                        && !e.getValue().contains(words[2])) {
                    unreachable.add(e.getKey() + " has the command '" + words[2] + "' that ./recount never runs");
                }
            }
        }
        return unreachable;
    }

    /** {@code CommandTree.describe(main)} inside a class loader of {@code module}'s classes and runtime classpath. */
    static List<String> describe(String module, String main) throws Exception {
        Path root = Path.of(System.getProperty("recount.root")).toAbsolutePath().normalize();
        Path classes = root.resolve(module).resolve("target/classes");
        Path classpath = root.resolve(module).resolve("target/runtime.classpath");
        if (!Files.isDirectory(classes) || !Files.isRegularFile(classpath)) {
            throw new AssertionError(
                    module + " is not built (" + classpath + " is missing): run `mvn -DskipTests package` first");
        }
        List<URL> urls = new ArrayList<>();
        urls.add(url(classes));
        for (String entry : Files.readString(classpath).strip().split(java.io.File.pathSeparator)) {
            if (!entry.isBlank()) urls.add(url(Path.of(entry)));
        }
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader loader =
                new URLClassLoader(module, urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Thread.currentThread().setContextClassLoader(loader);
            Class<?> tree = Class.forName("dev.recount.core.cli.CommandTree", true, loader);
            @SuppressWarnings("unchecked")
            List<String> lines =
                    (List<String>) tree.getMethod("describe", String.class).invoke(null, main);
            return List.copyOf(lines);
        } catch (InvocationTargetException e) {
            throw new AssertionError("cannot read the commands of " + main + " in " + module, e.getCause());
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    private static URL url(Path p) {
        try {
            return p.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(p.toString(), e);
        }
    }
}
