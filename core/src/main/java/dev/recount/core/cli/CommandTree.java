package dev.recount.core.cli;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A command tree as plain lines of text, for the test that holds docs/contract.md to the code: each module's
 * command tree is read in a class loader of that module's own classpath (Flink, Spark and the Kafka broker never
 * share one), and only strings cross between loaders.
 *
 * <p>Lines: {@code command <path>}, {@code option <path> <name>} (every name of every option),
 * {@code parameter <path> <label>}, {@code exit <path> <code>} and {@code alias <path> <old> <new>} (an
 * {@link OldName}: an old spelling still accepted), where path is how users type the command.
 */
public final class CommandTree {
    private CommandTree() {}

    /**
     * The tree of {@code mainClass}'s command line: the main class must have a {@code public static CommandLine
     * commandLine()} that builds it, configured and without side effects.
     */
    public static List<String> describe(String mainClass) throws ReflectiveOperationException {
        Class<?> main = Class.forName(mainClass, true, Thread.currentThread().getContextClassLoader());
        Method factory = main.getMethod("commandLine");
        return describe((CommandLine) factory.invoke(null));
    }

    public static List<String> describe(CommandLine commandLine) {
        List<String> lines = new ArrayList<>();
        describe(commandLine.getCommandSpec(), lines);
        return lines;
    }

    private static void describe(CommandSpec spec, List<String> lines) {
        String path = RecountCli.path(spec);
        lines.add("command " + path);
        java.util.Set<String> oldNames = new java.util.HashSet<>();
        for (OldName old : RecountCli.oldNames(spec)) {
            oldNames.add(old.name());
            lines.add("alias " + path + " " + old.name() + " " + old.now());
        }
        for (OptionSpec option : spec.options()) {
            for (String name : option.names()) {
                if (!oldNames.contains(name)) lines.add("option " + path + " " + name);
            }
        }
        for (PositionalParamSpec parameter : spec.positionalParameters()) {
            lines.add("parameter " + path + " " + parameter.paramLabel());
        }
        for (String code : spec.usageMessage().exitCodeList().keySet()) lines.add("exit " + path + " " + code.strip());
        for (CommandLine sub : new java.util.LinkedHashSet<>(spec.subcommands().values())) {
            describe(sub.getCommandSpec(), lines);
        }
    }
}
