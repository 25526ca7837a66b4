package dev.recount.e2e.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What docs/contract.md says about commands and settings, read from its markdown:
 * <ul>
 *   <li>the section whose heading names "Commands" has one {@code ### `recount ...`} heading per command; in it, table
 *       rows whose first cell holds {@code `--option ARG`} name its options, and a table headed {@code | exit code |}
 *       its exit codes (a command without one has its parent's);</li>
 *   <li>the section whose heading names "Settings" has one table row per setting, the setting in the first cell as
 *       {@code `key`}.</li>
 * </ul>
 */
final class ContractDoc {
    record Command(String path, TreeSet<String> options, TreeSet<Integer> exitCodes, String text) {}

    private static final Pattern COMMAND_HEADING = Pattern.compile("^### `(recount[^`]*)`\\s*$");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    final Map<String, Command> commands = new TreeMap<>();
    /** Setting key to its table row. */
    final Map<String, String> settings = new TreeMap<>();
    /** The commands section up to its first command: what holds for every command. */
    final String commandsIntro;
    /** The "Changes" section: what changed for users, old exit codes and option spellings among it. */
    final String changes;

    ContractDoc(String markdown) {
        List<String> commandsSection = section(markdown, "Commands");
        List<String> settingsSection = section(markdown, "Settings");
        StringBuilder intro = new StringBuilder();
        Command current = null;
        boolean inExitTable = false;
        for (String line : commandsSection) {
            Matcher heading = COMMAND_HEADING.matcher(line);
            if (heading.matches()) {
                current = new Command(heading.group(1).strip(), new TreeSet<>(), new TreeSet<>(), "");
                if (commands.put(current.path(), current) != null)
                    throw new AssertionError("two sections for " + current.path());
                inExitTable = false;
                continue;
            }
            if (line.startsWith("### "))
                throw new AssertionError("a command heading must be ### `recount ...`: " + line);
            if (current == null) {
                intro.append(line).append('\n');
                continue;
            }
            if (!line.startsWith("|")) {
                inExitTable = false;
                continue;
            }
            String first = firstCell(line);
            if (first.equalsIgnoreCase("exit code")) {
                inExitTable = true;
            } else if (inExitTable) {
                String code = first.replace("`", "").strip();
                if (code.matches("\\d+")) current.exitCodes().add(Integer.parseInt(code));
            } else {
                Matcher c = CODE.matcher(first);
                while (c.find()) {
                    String word = c.group(1).strip().split("[\\s=]", 2)[0];
                    if (word.startsWith("-")) current.options().add(word);
                }
            }
        }
        commandsIntro = intro.toString();
        changes = String.join("\n", section(markdown, "Changes"));
        for (String line : settingsSection) {
            if (!line.startsWith("|")) continue;
            Matcher c = CODE.matcher(firstCell(line));
            while (c.find()) settings.put(c.group(1).strip(), line);
        }
    }

    /** The exit codes that hold for {@code path}: its own table, else its parent's, up to {@code recount}. */
    TreeSet<Integer> exitCodesOf(String path) {
        for (String p = path; ; p = p.substring(0, p.lastIndexOf(' '))) {
            Command c = commands.get(p);
            if (c != null && !c.exitCodes().isEmpty()) return c.exitCodes();
            if (!p.contains(" ")) return new TreeSet<>();
        }
    }

    private static String firstCell(String row) {
        String[] cells = row.split("(?<!\\\\)\\|", -1); // `now\|event` is one cell
        return cells.length > 1 ? cells[1].strip() : "";
    }

    /** The lines of the {@code ## } section whose heading contains {@code name}. */
    private static List<String> section(String markdown, String name) {
        List<String> lines = new ArrayList<>();
        boolean in = false;
        for (String line : markdown.split("\\R")) {
            if (line.startsWith("## ")) {
                if (in) break;
                in = line.contains(name);
                continue;
            }
            if (in) lines.add(line);
        }
        if (lines.isEmpty()) throw new AssertionError("docs/contract.md has no section '## ... " + name + "'");
        return lines;
    }
}
