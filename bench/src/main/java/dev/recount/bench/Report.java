package dev.recount.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * Prints the results table of bench/run.sh and writes it, with the machine it ran on, between the generated-section
 * markers of docs/benchmarks.md (the rest of that file is written by hand). Args: results.tsv runDir benchmarks.md.
 */
public final class Report {
    private static final String BEGIN = "<!-- bench:generated:begin -->";
    private static final String END = "<!-- bench:generated:end -->";

    public static void main(String[] args) throws Exception {
        List<String> rows = Files.readAllLines(Path.of(args[0]));
        StringBuilder t = new StringBuilder();
        t.append("Run ")
                .append(Instant.now())
                .append(" (raw logs: `")
                .append(Path.of(args[1]).getFileName())
                .append("` under bench/target)\n\n");
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
        String generated = BEGIN + "\n" + t + END;
        body = b >= 0 && e > b
                ? body.substring(0, b) + generated + body.substring(e + END.length())
                : body + "\n" + generated + "\n";
        Files.writeString(doc, body);
        System.out.println("written to " + doc);
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
