package dev.recount.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints the results table of bench/run.sh and writes it, with the machine it ran on, between the generated-section
 * markers of docs/benchmarks.md (the rest of that file is written by hand). Args: results.tsv runDir benchmarks.md.
 *
 * <p>The section keeps one block per run directory: a run that adds to an earlier run's directory ({@code BENCH_OUT})
 * replaces that run's block, any other run is appended. The hand-written sections cite earlier runs' raw rows, so a
 * run of one section must not drop them.
 */
public final class Report {
    private static final String BEGIN = "<!-- bench:generated:begin -->";
    private static final String END = "<!-- bench:generated:end -->";

    public static void main(String[] args) throws Exception {
        List<String> rows = Files.readAllLines(Path.of(args[0]));
        StringBuilder t = new StringBuilder();
        String runDir = Path.of(args[1]).getFileName().toString();
        t.append("Run ").append(Instant.now()).append(rawLogs(runDir)).append("\n\n");
        t.append("Machine: ")
                .append(sh("echo \"nproc $(nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -srm)\""))
                .append("; ")
                .append(sh("java -version 2>&1 | head -1"))
                .append("; load average at the end: ")
                .append(sh("cut -d' ' -f1-3 /proc/loadavg"))
                .append(" (")
                .append(ManagementFactory.getOperatingSystemMXBean().getAvailableProcessors())
                .append(" CPUs visible)\n\n");
        t.append("| measure | value | unit | notes |\n|---|---:|---|---|\n");
        for (String r : rows) {
            if (r.isBlank()) continue;
            String[] f = r.split("\t", 4);
            t.append("| ")
                    .append(f[0])
                    .append(" | ")
                    .append(f.length > 1 ? f[1] : "")
                    .append(" | ")
                    .append(f.length > 2 ? f[2] : "")
                    .append(" | ")
                    .append(f.length > 3 ? f[3].replace("|", "/") : "")
                    .append(" |\n");
        }
        System.out.print(t);
        Path doc = Path.of(args[2]);
        String body = Files.exists(doc) ? Files.readString(doc) : "# Benchmarks\n\n" + BEGIN + "\n" + END + "\n";
        int b = body.indexOf(BEGIN);
        int e = body.indexOf(END);
        body = b >= 0 && e > b
                ? body.substring(0, b)
                        + BEGIN
                        + "\n"
                        + withRun(body.substring(b + BEGIN.length(), e).replaceFirst("^\n", ""), runDir, t.toString())
                        + END
                        + body.substring(e + END.length())
                : body + "\n" + BEGIN + "\n" + t + END + "\n";
        Files.writeString(doc, body);
        System.out.println("written to " + doc);
    }

    private static String rawLogs(String runDir) {
        return " (raw logs: `" + runDir + "` under bench/target)";
    }

    /**
     * The generated section's blocks with {@code block} in place of the block of {@code runDir}, or after the others
     * when it has none. A block is a "Run ..." line naming its run directory and everything up to the next one.
     */
    static String withRun(String section, String runDir, String block) {
        List<String> blocks = new ArrayList<>();
        int at = 0;
        while (at < section.length()) {
            int next = section.indexOf("\nRun ", at);
            int end = next < 0 ? section.length() : next + 1;
            blocks.add(section.substring(at, end));
            at = end;
        }
        String own = rawLogs(runDir);
        for (int i = 0; i < blocks.size(); i++) {
            String first = blocks.get(i).lines().findFirst().orElse("");
            if (first.startsWith("Run ") && first.endsWith(own)) {
                blocks.set(i, block + (i < blocks.size() - 1 ? "\n" : ""));
                return String.join("", blocks);
            }
        }
        String before = String.join("", blocks);
        return before.isBlank() ? block : before.stripTrailing() + "\n\n" + block;
    }

    private static String sh(String command) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", command)
                .redirectErrorStream(true)
                .start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String out = String.join(" ", r.lines().toList()).strip();
            p.waitFor();
            return out;
        }
    }
}
