package dev.recount.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/** Reading the commands' log files: what a note or a failure quotes of them. */
final class Logs {
    private Logs() {}

    static String lastLines(Path file) {
        return lastLines(file, 5);
    }

    static String lastLines(Path file, int n) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** The last line of the last lines of {@code file}. */
    static String lastLine(Path file) {
        String[] all = lastLines(file).strip().split("\\R");
        return all[all.length - 1];
    }

    /** The lines of {@code file} matching {@code regex}, the last of them. */
    static String lastMatching(Path file, String regex) {
        Pattern p = Pattern.compile(regex);
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                    .filter(l -> p.matcher(l).find())
                    .toList();
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        } catch (IOException e) {
            return "";
        }
    }
}
